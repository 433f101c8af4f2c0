/** The one list pipeline (src/upstream/README.md "Lists"): the parser, the worker that runs it for the poll, the whole-list reader. */
export { ListParse, type Initial, type ListParseOptions, type ParseBatch, type ParseEnd, type RawIndex } from './parse.js';
export { createListWorker, type ListWorker, type ParseOptions, type ParseSink } from './worker.js';
export { readList, type ReadListOptions } from './read.js';
