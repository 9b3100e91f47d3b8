/**
 * What a request builder returns, and what it is given: the request (without credentials), or a refusal naming
 * why nothing can be sent; and the values a call's templates are filled from.
 */
import { type HeaderValueSource } from '../contract/common';

/** A request to send to the provider, without credentials. Header names are lower-case. */
export interface ProviderRequest {
  method: string;
  /** Absolute URL on the contract's origin. */
  url: string;
  headers: Record<string, string>;
  /** The JSON body, when there is one (sent with the `content-type` header the builder set). */
  json?: unknown;
  /** A raw body, when the contract declares one (`body.raw`); never together with `json`. */
  body?: string;
}

/** Why no request was built. */
export type RefusalCategory = 'foreign_origin' | 'invalid_url' | 'missing_input' | 'invalid_input' | 'unsupported';

/** A built request, or a refusal with its category and a problem naming the cause. */
export type BuildResult =
  { kind: 'request'; request: ProviderRequest } | { kind: 'refused'; errorCategory: RefusalCategory; problem: string };

/** A refusal. */
export function refused(errorCategory: RefusalCategory, problem: string): BuildResult {
  return { kind: 'refused', errorCategory, problem };
}

/**
 * The facts of an operation every call's templates may name (`{token}`, `{clientReference}`, `{operationId}`,
 * a declared `{bucket}`) and its headers may carry (`{ from: ... }`); never a secret.
 */
export interface RequestFacts {
  /** The idempotency token (I1); never the trace ID (I4). */
  token?: string;
  /** The client reference sent to the provider (the caller's, else our operation ID). */
  clientReference?: string;
  operationId?: string;
  traceId?: string;
  /** The operation's variables (`record.variables`, defaults applied); a declared default fills one not given. */
  variables?: Readonly<Record<string, string>>;
  /** Now, epoch ms (for `now_http_date`). */
  nowMs?: number;
  /** When the create was first sent, epoch ms (for `first_sent_http_date`; defaults to `nowMs`). */
  firstSentAtMs?: number;
}

/** Input of the status and cancel builders: the job, and the poll URL read from the create answer. */
export interface JobRequestInput extends RequestFacts {
  jobId?: string;
  /** The poll URL (`{pollUrl}`; the status request goes there when the contract prefers it). */
  statusUrl?: string;
}

/** Input of the result builder. */
export interface ResultRequestInput extends JobRequestInput {
  /** The result URL of the observation's result reference (origin-checked, whole). */
  resultUrl?: string;
  /** Token paging: the next page's token; the result request is sent again with it as `{nextToken}`. */
  nextToken?: string;
}

/** Input of {@link buildCreateRequest} (`build/create.ts`). */
export interface CreateRequestInput extends RequestFacts {
  /** The request payload (a JSON value; an object when a token or reference goes in the body). */
  payload: unknown;
  /** The idempotency token (I1), sent where the contract puts one. */
  token: string;
  /** Now, epoch ms. */
  nowMs: number;
}

/**
 * The value of the fact a header's `{ from: ... }` names: the token, client reference, operation ID or trace ID as
 * they are, `now_http_date` and `first_sent_http_date` as HTTP dates (the first send defaulting to now); undefined
 * when `facts` lack it.
 */
export function factValue(
  from: Extract<HeaderValueSource, { from: string }>['from'],
  facts: RequestFacts,
): string | undefined {
  switch (from) {
    case 'now_http_date':
      return facts.nowMs === undefined ? undefined : new Date(facts.nowMs).toUTCString();
    case 'first_sent_http_date': {
      const at = facts.firstSentAtMs ?? facts.nowMs;
      return at === undefined ? undefined : new Date(at).toUTCString();
    }
    case 'token':
      return facts.token;
    case 'client_reference':
      return facts.clientReference;
    case 'operation_id':
      return facts.operationId;
    case 'trace_id':
      return facts.traceId;
  }
}
