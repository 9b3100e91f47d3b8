/**
 * Presets for the conventions real providers share (V1, V2, V4, V5), so a provider that follows one is written
 * with a base URL, a credential and the create path alone (`preset: azure-lro`), or, for AWS's JSON protocol, the
 * target of each call (`preset: aws-json`). Each preset is a partial contract computed from the document's create
 * method (Azure reads a PUT differently from a POST); the loader merges the document over it, so any field can
 * still be set or overridden.
 */

/** The names of the convention presets. */
export const CONVENTION_PRESET_NAMES = ['azure-lro', 'google-lro', 'http-202-location', 'aws-json'] as const;
/** A convention preset name. */
export type ConventionPresetName = (typeof CONVENTION_PRESET_NAMES)[number];

type Partial = Record<string, unknown>;

/**
 * Azure's provisioning and status words. The guidelines make only Succeeded, Failed and Canceled terminal and let
 * resource providers add their own non-terminal words; the common ones are listed, and any other word is
 * `unknown` (P1: stop and escalate, never guess): add yours to `stateTable.pending`.
 */
const AZURE_STATES = {
  pending: [
    'NotStarted',
    'Running',
    'Accepted',
    'Created',
    'Creating',
    'Updating',
    'Deleting',
    'Provisioning',
    'InProgress',
    'Canceling',
    'Cancelling',
    'Started',
    'Starting',
    'Stopping',
    'Restarting',
    'Migrating',
    'Scaling',
  ],
  success: ['Succeeded'],
  failure: ['Failed'],
  cancelled: ['Canceled', 'Cancelled'],
  caseInsensitive: true,
};

/**
 * Azure long-running operations (the Azure REST API guidelines and ARM's async operations): the poll URL from
 * `Operation-Location`, then `Azure-AsyncOperation` (a status monitor with a `status` field), then `Location`
 * (the resource, or 202 while it is not ready), and for PUT and PATCH the resource URL itself
 * (`provisioningState`). Where the result lives follows `final-state-via`'s defaults: a PUT or PATCH reads the
 * resource again, a POST reads the create answer's `Location` (else the monitor's `resourceLocation`, else the
 * monitor body), a DELETE has no result. PUT and DELETE are idempotent (V4): an ambiguous create is repeated.
 * A create answer naming a monitor is running until the monitor says otherwise, whatever its HTTP status, unless
 * its body states a final `provisioningState` (V5).
 */
function azureLro(method: string): Partial {
  const resourceReading = {
    stateField: ['properties.provisioningState', 'provisioningState'],
    stateTable: AZURE_STATES,
    pendingStatuses: [202],
    whenNoState: { success: [200, 201, 204] },
    result: [{ from: 'inline' }],
  };
  const writesResource = method === 'PUT' || method === 'PATCH';
  const monitorResult =
    method === 'POST'
      ? [
          { from: 'create_header', name: 'location' },
          { from: 'status_field', field: 'resourceLocation' },
          { from: 'inline' },
        ]
      : method === 'DELETE'
        ? []
        : [{ from: 'status_field', field: 'resourceLocation' }, { from: 'request_url' }];
  const idempotent = method === 'PUT' || method === 'DELETE';
  return {
    create: {
      acceptedStatuses: [200, 201, 202, 204],
      ...(method === 'DELETE' ? { body: { mode: 'none' } } : {}),
      ...(idempotent ? { idempotent: true } : {}),
      statusUrl: [
        { from: 'header', name: 'operation-location', reading: 'monitor' },
        { from: 'header', name: 'azure-asyncoperation', reading: 'monitor' },
        { from: 'header', name: 'location', reading: 'resource' },
        ...(writesResource ? [{ from: 'request_url', reading: 'resource' }] : []),
      ],
      readState: 'resource',
    },
    status: {
      useStatusUrl: true,
      ...resourceReading,
      readings: {
        monitor: { stateField: 'status', stateTable: AZURE_STATES, pendingStatuses: [202], result: monitorResult },
        resource: resourceReading,
      },
    },
    requestIdHeader: 'x-ms-request-id',
    providerError: { codeField: ['error.code', 'code'], messageField: ['error.message', 'message'] },
    // A POST may act without returning anything (the API's schema says); a DELETE never has a result.
    result: { url: [{ from: 'inline' }], required: method === 'PUT' || method === 'PATCH' },
    reconciliation: { method: idempotent ? 'same_token_resend' : 'none' },
    collectSafeToRepeat: true,
  };
}

/**
 * Google's long-running operations (AIP-151): the create answers with an Operation (`name`, `done`,
 * `metadata`, then `error` or `response`); the operation is read at `/v1/{name}`; the result is the `response`.
 */
function googleLro(): Partial {
  return {
    create: {
      acceptedStatuses: [200],
      jobId: [{ from: 'body', field: 'name' }],
      readState: true,
    },
    status: {
      path: '/v1/{+jobId}',
      derive: {
        doneField: 'done',
        errorField: 'error',
        responseField: 'response',
        cancelledWhen: { field: 'error.code', values: [1] },
      },
    },
    providerError: { codeField: ['error.code'], messageField: ['error.message'] },
    result: { url: [{ from: 'inline', field: 'response' }] },
    cancel: { method: 'POST', path: '/v1/{+jobId}:cancel', idempotent: true, acceptedStatuses: [200] },
    reconciliation: { method: 'none' },
    collectSafeToRepeat: true,
  };
}

/**
 * The plain asynchronous-request pattern: `202 Accepted` with a `Location` to poll; the poll URL answers 202
 * while the work runs and 200 (or 201, 204) with the result when it is done; a new `Location` on a 202 moves
 * polling there. The `Location` is a status monitor (V5): a create answered 200 or 201 that names one is polled
 * there, never taken as done by its HTTP status alone; one that names none is a synchronous answer.
 */
function http202Location(method: string): Partial {
  const byStatus = { pendingStatuses: [202], whenNoState: { success: [200, 201, 204] } };
  return {
    create: {
      acceptedStatuses: [200, 201, 202, 204],
      ...(method === 'DELETE' ? { body: { mode: 'none' } } : {}),
      ...(method === 'PUT' || method === 'DELETE' ? { idempotent: true } : {}),
      statusUrl: [{ from: 'header', name: 'location', reading: 'monitor' }],
      readState: true,
    },
    status: { useStatusUrl: true, ...byStatus, readings: { monitor: byStatus } },
    result: { url: [{ from: 'inline' }], required: method !== 'DELETE' },
    reconciliation: { method: method === 'PUT' || method === 'DELETE' ? 'same_token_resend' : 'none' },
    collectSafeToRepeat: true,
  };
}

/** AWS's JSON protocol media type (1.0 for Step Functions and DynamoDB, 1.1 for most other services). */
const AWS_JSON = 'application/x-amz-json-1.1';

/**
 * AWS's JSON protocol (Transcribe, Textract, Step Functions, Glue, Bedrock batch jobs...): every call is a POST to
 * `/` with an `X-Amz-Target` header naming the action (the document gives one per call) and a JSON body of
 * `application/x-amz-json-1.1`, signed with SigV4 (the document gives the region and the signing name). Every
 * answer is JSON whatever its label. Errors are `{"__type": "<namespace>#Code", "message": ...}` (some services
 * write `Message`); throttling is a 400 whose code says so, read as rate limited like a 429. A start that names an
 * idempotency token (`ClientRequestToken`, `IdempotencyToken`, a unique job name: `create.idempotencyToken` in the
 * body) is resent with it when its answer is lost.
 */
function awsJson(): Partial {
  return {
    credential: { scheme: 'aws-sigv4' },
    jsonContentTypes: [AWS_JSON, 'application/x-amz-json-1.0'],
    requestIdHeader: 'x-amzn-requestid',
    create: {
      method: 'POST',
      path: '/',
      body: { mode: 'payload', contentType: AWS_JSON },
      acceptedStatuses: [200],
      format: 'json',
    },
    status: { method: 'POST', path: '/', body: { contentType: AWS_JSON }, format: 'json' },
    providerError: {
      codeField: ['__type'],
      messageField: ['message', 'Message'],
      rateLimitedCodes: [
        'ThrottlingException',
        'TooManyRequestsException',
        'ProvisionedThroughputExceededException',
        'LimitExceededException',
        'RequestLimitExceeded',
      ],
    },
    result: { url: [{ from: 'inline' }] },
    reconciliation: { method: 'same_token_resend' },
    collectSafeToRepeat: true,
  };
}

/** The partial contract a convention preset gives for a document whose create uses `method` (default POST). */
export function conventionPreset(name: ConventionPresetName, method: string): Partial {
  switch (name) {
    case 'azure-lro':
      return azureLro(method);
    case 'google-lro':
      return googleLro();
    case 'http-202-location':
      return http202Location(method);
    case 'aws-json':
      return awsJson();
  }
}
