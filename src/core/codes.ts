/**
 * The one registry of asyncjob's stable error codes. Each code carries, as data, the exit status `asyncjob`
 * reports it with, whether retrying the same input can help (a Temporal failure of it is `nonRetryable` when
 * not), and its meaning in one line. Everything else (the CLI's exit status, the failure an activity or a refusal
 * becomes, docs/errors.md) is derived from this table. Codes never change meaning once published: callers,
 * scripts and agents match on them. Add new codes; never rename one. Pure: no imports.
 */

/** The exit statuses of `asyncjob`, stable for scripts (docs/cli.md). `audit`, `simulate` and `doctor` keep theirs. */
export const EXIT = {
  /** Done; for commands that report an operation: it succeeded or has not ended. */
  ok: 0,
  /** The operation ended badly: failed, cancelled or closed, or its workflow failed or was terminated. */
  operationEndedBadly: 1,
  /** Usage error or bad input: unknown command or option, bad duration, invalid JSON, invalid request, environment. */
  usage: 2,
  /** Refused: by the workflow (option not offered, cancel unsupported, ...), a fingerprint mismatch (I2), a join. */
  refused: 3,
  /** No operation with this ID. */
  notFound: 4,
  /** The Temporal server could not be reached (address, TLS, API key), or no worker answered in time. */
  connection: 5,
  /** An unexpected error of ours; the message (and --verbose) says what. */
  internal: 6,
  /** The operation needs a decision: it is escalated (`asyncjob decide ID` shows the options). */
  needsDecision: 7,
} as const;
/** An exit status of `asyncjob`. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What the registry holds for one code. */
export interface ErrorCodeInfo {
  /** The exit status `asyncjob` reports an error with this code with. */
  readonly exit: ExitCode;
  /** Whether the same call may succeed when repeated; a Temporal failure of it is `nonRetryable` when false. */
  readonly retryable: boolean;
  /** What the code means, in one line (docs/errors.md). */
  readonly meaning: string;
}

const FINAL = false;
const RETRYABLE = true;

function row(exit: ExitCode, retryable: boolean, meaning: string): ErrorCodeInfo {
  return { exit, retryable, meaning };
}

/** Every stable code, grouped by where it arises; the order is the order of docs/errors.md. */
export const ERROR_CODES = {
  // The command line, the environment, the unexpected.
  ASYNCJOB_ERR_USAGE: row(EXIT.usage, FINAL, 'the command line is wrong: an unknown command or option, a bad value'),
  ASYNCJOB_ERR_CONFIG_INVALID: row(
    EXIT.usage,
    FINAL,
    'the environment is misconfigured: a setting, a file it names, or a key (every problem listed)',
  ),
  ASYNCJOB_ERR_NODE_UNSUPPORTED: row(EXIT.usage, FINAL, 'the running Node.js is outside package.json engines'),
  ASYNCJOB_ERR_CREDENTIAL_MISSING: row(EXIT.usage, RETRYABLE, "a provider's credential reference names no secret"),
  ASYNCJOB_ERR_CREDENTIAL_UNAVAILABLE: row(
    EXIT.usage,
    RETRYABLE,
    'no credential could be had for a provider request (a secret not set, a token endpoint that refused, no AWS credentials); nothing was sent',
  ),
  ASYNCJOB_ERR_INTERNAL: row(EXIT.internal, RETRYABLE, 'an unexpected error; the server logged it, --verbose shows it'),
  // The client: starting, reading and answering operations.
  ASYNCJOB_ERR_INVALID_INPUT: row(EXIT.usage, FINAL, 'the input failed validation; the issues name every field'),
  ASYNCJOB_ERR_INVALID_VARIABLE: row(
    EXIT.usage,
    FINAL,
    "an operation variable does not fit the adapter's declarations; each variable named, nothing sent",
  ),
  ASYNCJOB_ERR_PROVIDER_UNSERVED: row(EXIT.usage, RETRYABLE, 'no worker serves this provider; nothing was started'),
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH: row(
    EXIT.refused,
    FINAL,
    'the operation ID or idempotency token is already used by a different request (I2)',
  ),
  ASYNCJOB_ERR_JOIN_MISMATCH: row(EXIT.refused, FINAL, 'the operation exists with other settings; each field named'),
  ASYNCJOB_ERR_REFUSED: row(EXIT.refused, FINAL, "the workflow refused the request; the refusal's own code says why"),
  ASYNCJOB_ERR_NOT_FOUND: row(EXIT.notFound, FINAL, 'no operation with this ID'),
  ASYNCJOB_ERR_CONNECTION: row(EXIT.connection, RETRYABLE, 'the Temporal server could not be reached'),
  ASYNCJOB_ERR_QUERY_TIMEOUT: row(EXIT.connection, RETRYABLE, 'no worker answered the query in time'),
  ASYNCJOB_ERR_UPDATE_TIMEOUT: row(
    EXIT.connection,
    RETRYABLE,
    'no worker took the cancel or decision in time; not refused, it may still be applied',
  ),
  ASYNCJOB_ERR_SERVER: row(EXIT.connection, RETRYABLE, 'the Temporal server answered with an error of its own'),
  ASYNCJOB_ERR_WORKFLOW_FAILED: row(EXIT.operationEndedBadly, FINAL, "the operation's workflow failed or was ended"),
  ASYNCJOB_ERR_WAIT_TIMEOUT: row(EXIT.internal, RETRYABLE, 'a wait reached its time limit; the operation goes on'),
  ASYNCJOB_ERR_ABORTED: row(EXIT.internal, FINAL, "a wait was aborted by the caller's signal; the operation goes on"),
  // The workflow's refusals of a cancel, a decision or an extension, and the state machine's.
  ASYNCJOB_ERR_NOT_READY: row(EXIT.refused, RETRYABLE, 'the operation is starting; ask again in a moment'),
  ASYNCJOB_ERR_OPERATION_FINAL: row(EXIT.refused, FINAL, 'the operation is in a final state'),
  ASYNCJOB_ERR_NO_OPEN_ESCALATION: row(EXIT.refused, FINAL, 'there is no open escalation to decide'),
  ASYNCJOB_ERR_OPTION_NOT_OFFERED: row(EXIT.refused, FINAL, 'the decision chose an option that was not offered (A2)'),
  ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE: row(
    EXIT.refused,
    FINAL,
    'the decision chose an option that cannot act here; the message names what is missing (E3)',
  ),
  ASYNCJOB_ERR_DECISION_INCOMPLETE: row(EXIT.refused, FINAL, 'the decision does not name who approved it and why'),
  ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS: row(EXIT.refused, FINAL, 'the decision asks for more than the offered bounds'),
  ASYNCJOB_ERR_DECISION_TOO_LATE: row(EXIT.refused, FINAL, 'the decision arrived after the decision deadline'),
  ASYNCJOB_ERR_SELF_APPROVAL: row(EXIT.refused, FINAL, 'the requester of an escalation cannot approve it (G2)'),
  ASYNCJOB_ERR_DECIDER_NOT_ALLOWED: row(
    EXIT.refused,
    FINAL,
    'the decider policy does not let this decider choose this option here (D2); the rule is named',
  ),
  ASYNCJOB_ERR_SIGNATURE_REQUIRED: row(
    EXIT.refused,
    FINAL,
    'the decider policy requires this decision signed (D3); the asyncjob decide command to run is named',
  ),
  ASYNCJOB_ERR_SIGNATURE_INVALID: row(EXIT.refused, FINAL, 'the decision signature does not verify (D3); why is named'),
  ASYNCJOB_ERR_EXTENSION_RATE_LIMITED: row(
    EXIT.refused,
    RETRYABLE,
    'too many extension requests on this operation for now (D4); when the next is allowed is named',
  ),
  ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT: row(
    EXIT.refused,
    FINAL,
    'the extension asked is more than any decider could grant (D4); the bound is named',
  ),
  ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE: row(EXIT.refused, FINAL, 'only a running provider job can get more time'),
  ASYNCJOB_ERR_CANCEL_UNSUPPORTED: row(EXIT.refused, FINAL, 'the provider has no cancel endpoint (X1)'),
  ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED: row(EXIT.refused, FINAL, 'a cancel was already requested; never sent twice'),
  ASYNCJOB_ERR_CANCEL_NOT_ALLOWED: row(EXIT.refused, FINAL, 'the operation cannot be cancelled in its current state'),
  ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED: row(EXIT.refused, FINAL, 'the state machine has no such transition (M1)'),
  ASYNCJOB_ERR_MISSING_EVIDENCE: row(EXIT.refused, FINAL, 'the transition needs evidence that was not supplied (M1)'),
  ASYNCJOB_ERR_JOB_ID_CONFLICT: row(EXIT.refused, FINAL, 'the provider reported a second, different job ID (U3)'),
  ASYNCJOB_ERR_DEADLINE_EXCEEDED: row(EXIT.operationEndedBadly, FINAL, 'the result deadline has passed (S3)'),
  ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED: row(
    EXIT.operationEndedBadly,
    FINAL,
    'the next status request would exceed the status-request budget (S4)',
  ),
  ASYNCJOB_ERR_NOT_CANONICALIZABLE: row(EXIT.usage, FINAL, 'the value cannot be written as canonical JSON'),
  ASYNCJOB_ERR_INSUFFICIENT_ENTROPY: row(EXIT.internal, FINAL, 'an idempotency token needs 16 random bytes (I1)'),
  // The worker: activities, the store, the provider registry and contracts, the HTTP client.
  ASYNCJOB_ERR_ACTIVITY_FAILED: row(EXIT.internal, RETRYABLE, 'an activity failed for a reason not of ours'),
  ASYNCJOB_ERR_NOTHING_SENT: row(
    EXIT.internal,
    RETRYABLE,
    'a provider call failed before it wrote any request (the store unreachable, no send slot): the provider got nothing',
  ),
  ASYNCJOB_ERR_INTENT_MISSING: row(EXIT.internal, FINAL, 'the intent is not recorded; nothing is sent before it (C1)'),
  ASYNCJOB_ERR_SNAPSHOT_MISSING: row(EXIT.internal, FINAL, 'the journal holds a step the stored snapshot does not'),
  ASYNCJOB_ERR_ARTIFACT_FAILED: row(EXIT.internal, RETRYABLE, 'the result artifact could not be written or read'),
  ASYNCJOB_ERR_JOURNAL_CONFLICT: row(
    EXIT.internal,
    FINAL,
    'a different entry is already recorded under this operation ID and sequence (M3)',
  ),
  ASYNCJOB_ERR_JOURNAL_GAP: row(EXIT.internal, FINAL, 'the entry would leave a gap in the operation journal'),
  ASYNCJOB_ERR_APPEND_ONLY: row(
    EXIT.internal,
    FINAL,
    'the journal and artifacts tables are append-only (the database)',
  ),
  ASYNCJOB_ERR_SECRET_IN_RECORD: row(
    EXIT.internal,
    FINAL,
    'a credential or secret value was offered to the store (T4)',
  ),
  ASYNCJOB_ERR_STORE_LOCATION: row(EXIT.usage, FINAL, 'the store location is not valid or cannot be opened'),
  ASYNCJOB_ERR_STORE_CLOSED: row(EXIT.internal, RETRYABLE, 'the store was used after it was closed'),
  ASYNCJOB_ERR_SESSION_TOO_LARGE: row(EXIT.internal, RETRYABLE, 'the provider session is over the size limit (V3)'),
  ASYNCJOB_ERR_PROVIDER_UNKNOWN: row(EXIT.usage, FINAL, 'no provider with that name is registered in this worker'),
  ASYNCJOB_ERR_PROVIDER_DUPLICATE: row(EXIT.usage, FINAL, 'two providers were registered under the same name'),
  ASYNCJOB_ERR_ADAPTER_INVALID: row(EXIT.usage, FINAL, 'the provider contract is invalid; every problem named'),
  ASYNCJOB_ERR_ADAPTER_NOT_FOUND: row(EXIT.usage, FINAL, 'no provider contract with that name or path was found'),
  ASYNCJOB_ERR_HTTP_INVALID_OPTIONS: row(EXIT.internal, FINAL, 'the HTTP client options failed validation'),
  ASYNCJOB_ERR_HTTP_INVALID_REQUEST: row(EXIT.internal, FINAL, 'a request built by our code is malformed'),
  ASYNCJOB_ERR_HTTP_CLIENT_CLOSED: row(EXIT.internal, RETRYABLE, 'the HTTP client was used after it was closed'),
  ASYNCJOB_ERR_HTTP_SINK_FAILED: row(EXIT.internal, RETRYABLE, 'the download sink failed (a local fault)'),
  ASYNCJOB_ERR_BODY_TOO_LARGE: row(EXIT.internal, FINAL, 'a body is over its size limit; answered 413 or observed'),
  // A user's workflow running an operation (asyncjob/workflow, Nexus): how an operation that did not succeed ends it.
  ASYNCJOB_ERR_OPERATION_EXISTS: row(
    EXIT.refused,
    FINAL,
    'the operation ID is already used: a child workflow never joins it (N1); follow it with the client or Nexus getOperation',
  ),
  ASYNCJOB_ERR_OPERATION_FAILED: row(
    EXIT.operationEndedBadly,
    FINAL,
    'the operation ended failed: the provider reported the job failed, or a stop condition ended it',
  ),
  ASYNCJOB_ERR_OPERATION_CANCELLED: row(EXIT.operationEndedBadly, FINAL, 'the operation ended cancelled (X2)'),
  ASYNCJOB_ERR_OPERATION_CLOSED: row(
    EXIT.operationEndedBadly,
    FINAL,
    'a decision closed the operation without a result',
  ),
  ASYNCJOB_ERR_ESCALATION_EXPIRED: row(
    EXIT.operationEndedBadly,
    FINAL,
    'the operation stayed escalated past its decision deadline (E2): nobody decided',
  ),
  // Encrypted payloads (ASYNCJOB_PAYLOAD_KEYS) and the codec server.
  ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN: row(
    EXIT.usage,
    FINAL,
    'a payload is encrypted under a key ID that ASYNCJOB_PAYLOAD_KEYS does not list here; the key ID is named',
  ),
  ASYNCJOB_ERR_PAYLOAD_UNDECRYPTABLE: row(
    EXIT.internal,
    FINAL,
    'an encrypted payload does not decrypt under the key its ID names: altered, or another key under that ID',
  ),
  // The MCP server's agent tools.
  ASYNCJOB_ERR_POLICY_REFUSED: row(EXIT.refused, FINAL, "outside the agent's policy; the message names the bound"),
  ASYNCJOB_ERR_OPERATION_ID_TAKEN: row(EXIT.refused, FINAL, 'the operation ID belongs to another caller'),
  ASYNCJOB_ERR_RESULT_UNAVAILABLE: row(EXIT.internal, FINAL, 'the result cannot be read, or does not match its hash'),
  ASYNCJOB_ERR_AUDIT_UNAVAILABLE: row(EXIT.internal, RETRYABLE, 'the audit store cannot be read now'),
  ASYNCJOB_ERR_UNAUTHENTICATED: row(EXIT.refused, FINAL, "no known agent bearer token, or another agent's session"),
  ASYNCJOB_ERR_POLICY_INVALID: row(
    EXIT.usage,
    FINAL,
    'a policy file (agents or deciders) is invalid; every problem named',
  ),
  // Audit, the simulator, the embedded demo.
  ASYNCJOB_ERR_WITNESS_UNAVAILABLE: row(EXIT.connection, RETRYABLE, "Temporal's history cannot be read now"),
  ASYNCJOB_ERR_SIM_OPTIONS: row(EXIT.usage, FINAL, 'the simulator options are invalid'),
  ASYNCJOB_ERR_SIM_SCENARIO_INVALID: row(EXIT.usage, FINAL, 'the simulator scenario is invalid; every field named'),
  ASYNCJOB_ERR_DEV_SERVER_EXITED: row(EXIT.internal, RETRYABLE, 'the Temporal dev server exited before it answered'),
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` (read from a failure's type, or any string) is one of the registry's. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}
