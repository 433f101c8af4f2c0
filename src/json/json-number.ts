/**
 * A JSON number whose literal a JavaScript number cannot give back: an integer beyond 2^53
 * (`9007199254740993`), more digits than a double holds, trailing zeros (`123.4500`), an exponent
 * (`1e2`), `-0`. `JSON.parse` would round or reformat it; kept as its literal, it is passed on exactly
 * as received. Every other number stays a plain `number`, whose `JSON.stringify` is its literal.
 */
export class JsonNumber {
  constructor(readonly literal: string) {}

  /** The nearest double, for arithmetic and comparisons. */
  valueOf(): number {
    return Number(this.literal);
  }

  /** The literal: `String(n)` and template strings give the number as written (ids, cells, CSV). */
  toString(): string {
    return this.literal;
  }

  /**
   * What `JSON.stringify` writes: the nearest double, as `JSON.parse` would have read it, since it
   * cannot write a literal. `stringifyExact` writes the literal.
   */
  toJSON(): number {
    return Number(this.literal);
  }
}

/** A number literal as the value that gives it back: a plain number when `JSON.stringify` writes the same literal. */
export function numberOf(literal: string): number | JsonNumber {
  const value = Number(literal);
  return String(value) === literal ? value : new JsonNumber(literal);
}

/** Whether `JSON.stringify` of the literal's number writes a different literal. */
export function isUnusualLiteral(literal: string): boolean {
  return String(Number(literal)) !== literal;
}
