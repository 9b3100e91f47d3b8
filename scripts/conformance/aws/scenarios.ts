/**
 * The scenarios of the `aws-json` conformance suite: the AWS documents of `examples/providers/` run against moto's
 * server (`moto[server]` 5.2.5) with signature checking on. What moto serves decides what each scenario can
 * prove (read from moto's source and tried against its server):
 * - Transcribe: `GetTranscriptionJob` moves a job QUEUED, IN_PROGRESS, COMPLETED, one step per read; no job ever
 *   fails; a second `StartTranscriptionJob` of the same name answers 400 `ConflictException`; an unknown name
 *   answers 400 `BadRequestException` ("The requested job couldn't be found"); an unknown vocabulary refuses the
 *   start with 400 `BadRequestException`.
 * - Textract: a detection job is `SUCCEEDED` at once with one page of result; `ClientRequestToken` is ignored
 *   (the same token starts a second job) and `MaxResults`/`NextToken` are ignored (never a second page).
 * - Step Functions, with state machine execution on: executions really run their Wait, Pass and Fail states;
 *   `StartExecution` with the name and input of a running execution answers that execution again (AWS's
 *   idempotency for STANDARD workflows), and `ExecutionAlreadyExists` once it has ended.
 * Throttling and a lost create answer are played by the fault proxy (fault-proxy.ts), one per scenario.
 */
import type { FaultPlan } from './fault-proxy';

/** The AWS documents under `examples/providers/`. */
export type AwsDocument = 'amazon-transcribe' | 'amazon-textract' | 'aws-step-functions';

/** The Step Functions state machines the suite creates on moto before the scenarios run. */
export const STATE_MACHINES = {
  /** Waits a second, then succeeds with `{"transcoded": true}`. */
  succeeds: {
    StartAt: 'Work',
    States: {
      Work: { Type: 'Wait', Seconds: 1, Next: 'Done' },
      Done: { Type: 'Pass', Result: { transcoded: true }, End: true },
    },
  },
  /** Waits a second, then fails with an error and a cause of its own. */
  fails: {
    StartAt: 'Work',
    States: {
      Work: { Type: 'Wait', Seconds: 1, Next: 'Broken' },
      Broken: { Type: 'Fail', Error: 'Media.Unreadable', Cause: 'the input is not a media file' },
    },
  },
  /** Runs long enough for a lost create answer to be found again while the execution still runs. */
  slow: {
    StartAt: 'Work',
    States: {
      Work: { Type: 'Wait', Seconds: 6, Next: 'Done' },
      Done: { Type: 'Pass', Result: { transcoded: true }, End: true },
    },
  },
} as const;
/** A state machine of the suite. */
export type StateMachineName = keyof typeof STATE_MACHINES;

/** What a scenario knows of the run when it builds its payload: the ARN of each state machine. */
export interface ScenarioContext {
  stateMachineArn: Record<StateMachineName, string>;
}

/** What a correct client ends with. */
export type Expected = 'succeeded' | 'not_succeeded';

/** One scenario of the suite. */
export interface AwsScenario {
  name: string;
  document: AwsDocument;
  /** What it proves, in one line (the table's last column). */
  proves: string;
  /** The operation's payload (the start request's body, less what the document adds). */
  payload: (context: ScenarioContext) => Record<string, unknown>;
  /** The faults the scenario's proxy plays. */
  faults?: FaultPlan;
  /** Sign with a secret moto does not know (the worker's credentials profile `wrong-secret`). */
  wrongSecret?: true;
  expected: Expected;
  /** For a sad path ended by the provider's own final state: the state asyncjob must have read. */
  providerState?: string;
  /** For `succeeded`: a check of the stored result; answers a problem, or undefined when it holds. */
  result?: (json: unknown) => string | undefined;
}

const media = (name: string) => ({ LanguageCode: 'en-US', Media: { MediaFileUri: `s3://conformance/${name}.mp3` } });
const document = (name: string) => ({ DocumentLocation: { S3Object: { Bucket: 'conformance', Name: `${name}.pdf` } } });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A Transcribe result is the finished job: COMPLETED, with the transcript's location. */
function completedTranscription(json: unknown): string | undefined {
  if (!isObject(json)) return `the result is not the job: ${JSON.stringify(json)?.slice(0, 120)}`;
  if (json.TranscriptionJobStatus !== 'COMPLETED') return `the job is ${String(json.TranscriptionJobStatus)}`;
  const transcript = json.Transcript;
  if (!isObject(transcript) || typeof transcript.TranscriptFileUri !== 'string')
    return 'the result names no Transcript.TranscriptFileUri';
  return undefined;
}

/** A Step Functions result is the execution's output, a JSON text. */
function transcodedOutput(json: unknown): string | undefined {
  if (typeof json !== 'string') return `the result is not the output text: ${JSON.stringify(json)?.slice(0, 120)}`;
  const parsed = JSON.parse(json) as unknown;
  return isObject(parsed) && parsed.transcoded === true ? undefined : `the output is ${json}`;
}

/** A Textract result is the detected blocks: the blocks of every page as one list, one page or many (moto detects none). */
function textBlocks(json: unknown): string | undefined {
  if (Array.isArray(json) && json.every((block) => isObject(block) && 'BlockType' in block)) return undefined;
  return `the result is not the list of detected blocks: ${JSON.stringify(json)?.slice(0, 120)}`;
}

const START_TRANSCRIPTION = 'Transcribe.StartTranscriptionJob';
const GET_TRANSCRIPTION = 'Transcribe.GetTranscriptionJob';

/** Every scenario counted in N. */
export const AWS_SCENARIOS: readonly AwsScenario[] = [
  {
    name: 'TranscribeSucceeds',
    document: 'amazon-transcribe',
    proves: 'QUEUED, IN_PROGRESS, COMPLETED read by POST; the job is the result',
    payload: () => media('succeeds'),
    expected: 'succeeded',
    result: completedTranscription,
  },
  {
    name: 'TranscribeThrottled',
    document: 'amazon-transcribe',
    proves: 'ThrottlingException (400) on the start and two reads is waited out, never a failure',
    payload: () => media('throttled'),
    faults: { throttle: { [START_TRANSCRIPTION]: 1, [GET_TRANSCRIPTION]: 2 } },
    expected: 'succeeded',
    result: completedTranscription,
  },
  {
    name: 'TranscribeCreateAnswerLost',
    document: 'amazon-transcribe',
    proves: 'a start processed but unanswered is found by GetTranscriptionJob of its name (lookup)',
    payload: () => media('lost'),
    faults: { dropAnswer: { [START_TRANSCRIPTION]: 1 } },
    expected: 'succeeded',
    result: completedTranscription,
  },
  {
    name: 'TranscribeStartRefused',
    document: 'amazon-transcribe',
    proves: 'a start refused with 400 BadRequestException stops the operation (request_rejected), nothing created',
    payload: () => ({ ...media('refused'), Settings: { VocabularyName: 'no-such-vocabulary' } }),
    expected: 'not_succeeded',
  },
  {
    name: 'TranscribeWrongSignature',
    document: 'amazon-transcribe',
    proves: 'a request signed with a wrong secret is refused by moto (403 SignatureDoesNotMatch)',
    payload: () => media('wrong-signature'),
    wrongSecret: true,
    expected: 'not_succeeded',
  },
  {
    name: 'TextractSucceeds',
    document: 'amazon-textract',
    proves: 'a detection job read by POST; its result pages collected (moto answers one page)',
    payload: () => document('succeeds'),
    expected: 'succeeded',
    result: textBlocks,
  },
  {
    name: 'StepFunctionsSucceeds',
    document: 'aws-step-functions',
    proves: 'an execution RUNNING, then SUCCEEDED; its output is the result',
    payload: (context) => ({ stateMachineArn: context.stateMachineArn.succeeds, input: '{"media":"succeeds"}' }),
    expected: 'succeeded',
    result: transcodedOutput,
  },
  {
    name: 'StepFunctionsFails',
    document: 'aws-step-functions',
    proves: "an execution FAILED ends the operation failed with the provider's error",
    payload: (context) => ({ stateMachineArn: context.stateMachineArn.fails, input: '{"media":"fails"}' }),
    expected: 'not_succeeded',
    providerState: 'FAILED',
  },
  {
    name: 'StepFunctionsCreateAnswerLost',
    document: 'aws-step-functions',
    proves: 'a start processed but unanswered is resent with the same name (the token): one execution',
    payload: (context) => ({ stateMachineArn: context.stateMachineArn.slow, input: '{"media":"lost"}' }),
    faults: { dropAnswer: { 'AWSStepFunctions.StartExecution': 1 } },
    expected: 'succeeded',
    result: transcodedOutput,
  },
];

/** Scenarios the issue names that moto cannot play, left out of N with the reason (listed in the README). */
export const AWS_LEFT_OUT: readonly { scenario: string; reason: string }[] = [
  {
    scenario: 'TextractPaged',
    reason:
      "moto 5.2.5 ignores MaxResults and NextToken in GetDocumentTextDetection and answers every job in one page, and none of moto's JSON-protocol job APIs pages its results (Rekognition answers an empty NextToken, Athena one page): TextractSucceeds reads its one page through the document's NextToken paging; paging by token across three pages is proved in test/activities/request-templates.test.ts against a loopback provider",
  },
  {
    scenario: 'TextractCreateAnswerLost',
    reason:
      'moto 5.2.5 ignores ClientRequestToken (the same token starts a second job), so a resend cannot be proved to find the first job; StepFunctionsCreateAnswerLost proves reconciliation through the idempotency token instead',
  },
  {
    scenario: 'TranscribeFails, TextractFails',
    reason:
      'moto 5.2.5 never fails a Transcribe or Textract job (Transcribe moves QUEUED to COMPLETED, Textract is SUCCEEDED at once); StepFunctionsFails proves a provider failure instead',
  },
];

/** The names of the counted scenarios (for `--only`). */
export const AWS_SCENARIO_NAMES: readonly string[] = AWS_SCENARIOS.map((s) => s.name);

/** The deterministic subset the vitest test runs: success, failure, throttling and both lost-answer paths. */
export const AWS_SUBSET: readonly string[] = [
  'TranscribeSucceeds',
  'TranscribeThrottled',
  'TranscribeCreateAnswerLost',
  'StepFunctionsFails',
  'StepFunctionsCreateAnswerLost',
];
