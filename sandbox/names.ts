/**
 * Tables for realistic Polish records, diacritics included: names, streets, cities with their postal
 * codes, e-mail domains. Surnames ending in -ski/-cki/-dzki take -ska/-cka/-dzka for women.
 */
export const FEMALE_FIRST_NAMES = [
  'Anna', 'Maria', 'Katarzyna', 'Małgorzata', 'Agnieszka', 'Barbara', 'Ewa', 'Krystyna', 'Elżbieta',
  'Zofia', 'Joanna', 'Magdalena', 'Monika', 'Danuta', 'Teresa', 'Natalia', 'Aleksandra', 'Julia',
  'Zuzanna', 'Łucja', 'Wiktoria', 'Oliwia', 'Hanna', 'Jadwiga', 'Halina', 'Grażyna', 'Beata',
  'Dorota', 'Żaneta', 'Bożena', 'Jolanta', 'Urszula', 'Iwona', 'Paulina', 'Weronika', 'Gabriela',
] as const;

export const MALE_FIRST_NAMES = [
  'Piotr', 'Krzysztof', 'Andrzej', 'Tomasz', 'Paweł', 'Michał', 'Marcin', 'Jakub', 'Łukasz',
  'Grzegorz', 'Mateusz', 'Wojciech', 'Mariusz', 'Dariusz', 'Zbigniew', 'Jerzy', 'Maciej', 'Rafał',
  'Kamil', 'Szymon', 'Bartłomiej', 'Przemysław', 'Mikołaj', 'Jędrzej', 'Antoni', 'Jan', 'Stanisław',
  'Filip', 'Adam', 'Dawid', 'Sebastian', 'Sławomir', 'Zdzisław', 'Bogusław', 'Józef', 'Wiesław',
] as const;

/** Surnames that do not change with gender. */
export const PLAIN_SURNAMES = [
  'Nowak', 'Wójcik', 'Kowalczyk', 'Woźniak', 'Mazur', 'Krawczyk', 'Kaczmarek', 'Zając', 'Król',
  'Wróbel', 'Dudek', 'Pawlak', 'Michalak', 'Sikora', 'Baran', 'Szewczyk', 'Ostrowski', 'Tomaszewski',
  'Pietrzak', 'Jabłoński', 'Nowicki', 'Żak', 'Górecki', 'Kołodziej', 'Wawrzyniak', 'Śliwa', 'Gołębiowski',
  'Łuczak', 'Ćwik', 'Błaszczyk', 'Głowacki', 'Bąk', 'Grabowski', 'Chmielewski', 'Szczepański', 'Wąsik',
] as const;

export const STREETS = [
  'Kwiatowa', 'Marszałkowska', 'Piękna', 'Żeromskiego', 'Słowackiego', 'Mickiewicza', 'Jagiellońska',
  'Świętokrzyska', 'Długa', 'Łąkowa', 'Źródlana', 'Grójecka', 'Puławska', 'Wróblewskiego', 'Żwirki i Wigury',
  'Kościuszki', 'Sienkiewicza', 'Ogrodowa', 'Leśna', 'Polna', 'Wiśniowa', 'Różana', 'Księcia Józefa',
  'Aleje Ujazdowskie', 'Chełmońskiego', 'Bażantowa', 'Szkolna', 'Krótka', 'Nadwiślańska', 'Gęsia',
] as const;

/** City and the first two digits of its postal codes. */
export const CITIES: readonly (readonly [string, string])[] = [
  ['Warszawa', '0'], ['Kraków', '3'], ['Łódź', '9'], ['Wrocław', '5'], ['Poznań', '6'], ['Gdańsk', '8'],
  ['Szczecin', '7'], ['Bydgoszcz', '8'], ['Lublin', '2'], ['Białystok', '1'], ['Katowice', '4'],
  ['Gdynia', '8'], ['Częstochowa', '4'], ['Radom', '2'], ['Toruń', '8'], ['Rzeszów', '3'],
  ['Kielce', '2'], ['Olsztyn', '1'], ['Zielona Góra', '6'], ['Bielsko-Biała', '4'], ['Gniezno', '6'],
  ['Świnoujście', '7'], ['Łomża', '1'], ['Żyrardów', '9'], ['Sopot', '8'], ['Zakopane', '3'],
];

export const EMAIL_DOMAINS = ['gmail.com', 'wp.pl', 'onet.pl', 'o2.pl', 'interia.pl', 'poczta.fm', 'outlook.com', 'szkola-jezykowa.pl'] as const;

export const LANGUAGES = ['pl_PL', 'pl_PL', 'pl_PL', 'pl_PL', 'pl_PL', 'en_GB', 'uk_UA', 'de_DE'] as const;

export const COURSES = [
  'kurs języka angielskiego B1', 'kurs języka niemieckiego A2', 'zajęcia indywidualne — hiszpański',
  'przygotowanie do matury z angielskiego', 'kurs wakacyjny — włoski', 'konwersacje po francusku',
] as const;

const DIACRITICS: Record<string, string> = {
  ą: 'a', ć: 'c', ę: 'e', ł: 'l', ń: 'n', ó: 'o', ś: 's', ź: 'z', ż: 'z',
  Ą: 'A', Ć: 'C', Ę: 'E', Ł: 'L', Ń: 'N', Ó: 'O', Ś: 'S', Ź: 'Z', Ż: 'Z',
};

/** `Łucja Wąsik` → `lucja.wasik`: logins and most e-mail addresses are ASCII. */
export function toAscii(text: string): string {
  return text.replace(/[ąćęłńóśźżĄĆĘŁŃÓŚŹŻ]/g, (ch) => DIACRITICS[ch] ?? ch);
}

/** The feminine form of a -ski/-cki/-dzki surname; others are unchanged. */
export function feminineSurname(surname: string): string {
  return /(ski|cki|dzki)$/.test(surname) ? `${surname.slice(0, -1)}a` : surname;
}
