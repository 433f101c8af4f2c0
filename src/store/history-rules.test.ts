import { describe, expect, it } from 'vitest';
import { caseForms, jsonForms } from './history-rules.js';

describe('caseForms', () => {
  it('gives each word with a letter past ASCII in lower, upper and title case', () => {
    expect(caseForms('łUCJA')).toEqual(['łUCJA', 'łucja', 'ŁUCJA', 'Łucja']);
    expect(caseForms('jan Żółć')).toEqual(['jan Żółć', 'jan żółć', 'jan ŻÓŁĆ']);
    expect(caseForms('Fv 12/11')).toEqual(['Fv 12/11']);
  });

  it('stays bounded, and every form is the text in another case', () => {
    for (const text of ['ą', 'ą ę', 'ą ę ó', 'ą ę ó ł', 'ą ę ó ł ś ź ż ć ń']) {
      const forms = caseForms(text);
      expect(forms.length).toBeLessThanOrEqual(28);
      expect(forms[0]).toBe(text);
      for (const form of forms) expect(form.toLowerCase()).toBe(text.toLowerCase());
    }
    expect(caseForms('ą ę ó ł')).toEqual(['ą ę ó ł', 'Ą Ę Ó Ł']);
  });

  it('is what jsonForms writes in every JSON form', () => {
    expect(jsonForms('Łucja')).toEqual(expect.arrayContaining(['łucja', 'Łucja', 'ŁUCJA', '\\u0141ucja', '\\u0142ucja']));
  });
});
