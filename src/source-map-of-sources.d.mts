/** A source map (version 3), as esbuild writes it. */
export interface SourceMap {
  version: number;
  sources: string[];
  names?: string[];
  mappings: string;
  sourcesContent?: (string | null)[];
  [field: string]: unknown;
}

export function decodeSegment(text: string): number[];
export function encodeNumber(number: number): string;
export function withSourcesOnly(map: SourceMap, keep: (source: string) => boolean): SourceMap;
