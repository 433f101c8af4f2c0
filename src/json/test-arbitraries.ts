import fc from 'fast-check';

/**
 * Generators for the JSON tests of this folder. Not used by the daemon.
 */

/** Any number literal JSON's grammar allows: signs, leading zero, fractions, exponents, huge and tiny. */
export const numberLiteral = (): fc.Arbitrary<string> =>
  fc.stringMatching(/^-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?$/);

/** A JSON text of `value` with whitespace between tokens (indented, so with line breaks). */
export const spaced = (value: unknown): string => JSON.stringify(value, null, 2) ?? 'null';
