/** How answers are read (V6), in explain's words: the contract's extra JSON media types and a reading's format. Pure. */
import { type AnswerFormat, type ProviderContract } from '../contract';
import { list } from './phrases';

/** The media types read as JSON besides the standard ones, or nothing when the contract lists none. */
export function jsonContentTypesLines(contract: ProviderContract): string[] {
  const extra = contract.jsonContentTypes;
  return extra === undefined
    ? []
    : [`answers labelled ${list(extra)} are read as JSON too, like application/json (V6)`];
}

/** What a reading's `format` does with `what` (the create answer, a status answer), or nothing when none is given. */
export function answerFormatLines(format: AnswerFormat | undefined, what: string): string[] {
  if (format === undefined) return [];
  if (format === 'json') return [`${what}: read as JSON whatever its content type (format json, V6)`];
  return [`${what}: never parsed (format ${format}); its HTTP status and headers decide (V6)`];
}
