/**
 * The LRO scenarios of Azure's conformance server (`@microsoft.azure/autorest.testserver` 3.3.51) that
 * `npm run conformance` drives through asyncjob, each with the adapter convention a user would pick for it, its
 * route, the outcome a correct LRO client reaches, and the server's coverage counters that prove the scenario was
 * really exercised (`GET /report/azure`, `GET /report/optional`).
 *
 * Expected outcomes follow the operation descriptions in the server's `swagger/lro.json` and what the route
 * answers (`legacy/routes/lros.js`): `succeeded` (with the JSON the final answer carries, when it carries one),
 * or `not_succeeded` for the sad paths (a 4xx, a `Failed` or `Canceled` state, a monitor without a status, an
 * unparseable answer, a poll URL that does not exist). Nothing here is tuned to make asyncjob pass.
 */

/** The adapter conventions, one template each in `test/conformance/<convention>.yaml`. */
export type Convention =
  'azure-put' | 'azure-patch' | 'azure-delete' | 'azure-post' | 'azure-post-async' | 'azure-post-paged';

/** What a correct client ends with. */
export type Expected = 'succeeded' | 'not_succeeded';

/** One scenario of the conformance server. */
export interface Scenario {
  /** The scenario's name (its main coverage counter). */
  name: string;
  convention: Convention;
  method: 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  /** The create path on the test server. */
  route: string;
  expected: Expected;
  /** For `succeeded`: the JSON the stored result must hold; absent when the operation returns nothing to check. */
  result?: unknown;
  /** Coverage counters that must all go up (default: `[name]`). */
  counters?: string[];
  /** Extra headers the provider requires on every call (the adapter's top-level `headers:`). */
  headers?: Record<string, string>;
  /**
   * For a sad path ended by the provider's own final state (`Failed`, `Canceled`): the state asyncjob must have
   * read, so an operation that stopped for another reason does not pass by accident.
   */
  providerState?: string;
}

/** The test server's client request ID scenarios require it on every request. */
const CLIENT_REQUEST_ID = { 'x-ms-client-request-id': '9C4D50EE-2D56-4CD3-8152-34347DC9F2B0' };

const FOO_SUCCEEDED = { properties: { provisioningState: 'Succeeded' }, id: '100', name: 'foo' };
const FOO = { id: '100', name: 'foo' };
const SKU = { name: 'sku', id: '100' };
const SUB_SUCCEEDED = { properties: { provisioningState: 'Succeeded' }, id: '100', subresource: 'sub1' };

const put = (name: string, route: string, expected: Expected, extra: Partial<Scenario> = {}): Scenario => ({
  name,
  convention: 'azure-put',
  method: 'PUT',
  route,
  expected,
  ...extra,
});
const patch = (name: string, route: string, expected: Expected, extra: Partial<Scenario> = {}): Scenario => ({
  name,
  convention: 'azure-patch',
  method: 'PATCH',
  route,
  expected,
  ...extra,
});
const del = (name: string, route: string, expected: Expected, extra: Partial<Scenario> = {}): Scenario => ({
  name,
  convention: 'azure-delete',
  method: 'DELETE',
  route,
  expected,
  ...extra,
});
const post = (name: string, route: string, expected: Expected, extra: Partial<Scenario> = {}): Scenario => ({
  name,
  convention: 'azure-post',
  method: 'POST',
  route,
  expected,
  ...extra,
});

/** Every scenario counted in N. */
export const SCENARIOS: readonly Scenario[] = [
  // PUT: final-state-via original-uri; the result is the resource.
  put('LROPutInlineComplete', '/lro/put/200/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutInlineComplete201', '/lro/put/201/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPut200InlineCompleteNoState', '/lro/put/200/succeeded/nostate', 'succeeded', { result: FOO }),
  put('LROPut202Retry200', '/lro/put/202/retry/200', 'succeeded', { result: FOO }),
  put('LROPutSucceededWithBody', '/lro/put/201/creating/succeeded/200', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutSucceededNoBody', '/lro/put/200/updating/succeeded/200', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutFailed', '/lro/put/201/created/failed/200', 'not_succeeded', { providerState: 'Failed' }),
  put('LROPutCanceled', '/lro/put/200/accepted/canceled/200', 'not_succeeded', { providerState: 'Canceled' }),
  put('LROPutAsyncRetrySucceeded', '/lro/putasync/retry/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutAsyncNoRetrySucceeded', '/lro/putasync/noretry/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutAsyncRetryFailed', '/lro/putasync/retry/failed', 'not_succeeded', { providerState: 'Failed' }),
  put('LROPutAsyncNoRetryCanceled', '/lro/putasync/noretry/canceled', 'not_succeeded', { providerState: 'Canceled' }),
  put('LROPutNoHeaderInRetry', '/lro/put/noheader/202/200', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutAsyncNoHeaderInRetry', '/lro/putasync/noheader/201/200', 'succeeded', { result: FOO_SUCCEEDED }),
  put('LROPutSubResourceInRetry', '/lro/putsubresource/202/200', 'succeeded', { result: SUB_SUCCEEDED }),
  put('LROPutSubResourceAsyncInRetry', '/lro/putsubresourceasync/202/200', 'succeeded', { result: SUB_SUCCEEDED }),
  put('LROPutNonResourceInRetry', '/lro/putnonresource/202/200', 'succeeded', { result: SKU }),
  put('LROPutNonResourceAsyncInRetry', '/lro/putnonresourceasync/202/200', 'succeeded', { result: SKU }),
  put('LRORetryPutSucceededWithBody', '/lro/retryerror/put/201/creating/succeeded/200', 'succeeded', {
    result: FOO_SUCCEEDED,
  }),
  put('LRORetryErrorPutAsyncSucceeded', '/lro/retryerror/putasync/retry/succeeded', 'succeeded', {
    result: FOO_SUCCEEDED,
    counters: ['LRORetryErrorPutAsyncSucceeded', 'LRORetryErrorPutAsyncSucceededPolling'],
  }),
  put('LRONonRetryPut400', '/lro/nonretryerror/put/400', 'not_succeeded'),
  put('LRONonRetryPut201Creating400', '/lro/nonretryerror/put/201/creating/400', 'not_succeeded'),
  put(
    'LRONonRetryPut201Creating400InvalidJson',
    '/lro/nonretryerror/put/201/creating/400/invalidjson',
    'not_succeeded',
  ),
  put('LRONonRetryPutAsyncRetry400', '/lro/nonretryerror/putasync/retry/400', 'not_succeeded'),
  put('LROErrorPut201NoProvisioningStatePayload', '/lro/error/put/201/noprovisioningstatepayload', 'not_succeeded'),
  put('LROErrorPutAsyncNoPollingStatus', '/lro/error/putasync/retry/nostatus', 'not_succeeded'),
  put('LROErrorPutAsyncNoPollingStatusPayload', '/lro/error/putasync/retry/nostatuspayload', 'not_succeeded'),
  put('LROErrorPut200InvalidJson', '/lro/error/put/200/invalidjson', 'not_succeeded'),
  put('LROErrorPutAsyncInvalidHeader', '/lro/error/putasync/retry/invalidheader', 'not_succeeded'),
  put('LROErrorPutAsyncInvalidJsonPolling', '/lro/error/putasync/retry/invalidjsonpolling', 'not_succeeded'),
  put('CustomHeaderPutAsyncSucceded', '/lro/customheader/putasync/retry/succeeded', 'succeeded', {
    result: FOO_SUCCEEDED,
    headers: CLIENT_REQUEST_ID,
  }),
  put('CustomHeaderPutSucceeded', '/lro/customheader/put/201/creating/succeeded/200', 'succeeded', {
    result: FOO_SUCCEEDED,
    headers: CLIENT_REQUEST_ID,
  }),

  // PATCH: as PUT, never repeated on its own.
  patch('LROPatchInlineCompleteIgnoreHeaders', '/lro/patch/200/succeeded/ignoreheaders', 'succeeded', {
    result: FOO_SUCCEEDED,
  }),
  patch('LROPatch201WithAsyncHeader', '/lro/patch/201/retry/onlyAsyncHeader', 'succeeded', {
    result: { properties: { provisioningState: 'Succeeded' }, id: '/lro/patch/201/retry/onlyAsyncHeader', name: 'foo' },
  }),
  patch('LROPatch202WithAsyncAndLocationHeader', '/lro/patch/202/retry/asyncAndLocationHeader', 'succeeded', {
    result: {
      properties: { provisioningState: 'Succeeded' },
      id: '/lro/patch/202/retry/asyncAndLocationHeader',
      name: 'foo',
    },
  }),

  // DELETE: done at 200/204 or a final provisioningState; the final answer's body, if any, is kept.
  del('LRODeleteInlineComplete', '/lro/delete/204/succeeded', 'succeeded'),
  del('LRODelete200', '/lro/delete/202/retry/200', 'succeeded'),
  del('LRODelete204', '/lro/delete/202/noretry/204', 'succeeded'),
  del('LRODeleteNoHeaderInRetry', '/lro/delete/noheader', 'succeeded'),
  del('LRODeleteAsyncNoHeaderInRetry', '/lro/deleteasync/noheader/202/204', 'succeeded'),
  del('LRODeleteProvisioningSucceededWithBody', '/lro/delete/provisioning/202/accepted/200/succeeded', 'succeeded', {
    result: FOO_SUCCEEDED,
  }),
  del('LRODeleteProvisioningFailed', '/lro/delete/provisioning/202/deleting/200/failed', 'not_succeeded', {
    providerState: 'Failed',
  }),
  del('LRODeleteProvisioningCanceled', '/lro/delete/provisioning/202/deleting/200/canceled', 'not_succeeded', {
    providerState: 'Canceled',
  }),
  del('LRODeleteAsyncRetrySucceeded', '/lro/deleteasync/retry/succeeded', 'succeeded'),
  del('LRODeleteAsyncNoRetrySucceeded', '/lro/deleteasync/noretry/succeeded', 'succeeded'),
  del('LRODeleteAsyncRetryFailed', '/lro/deleteasync/retry/failed', 'not_succeeded', { providerState: 'Failed' }),
  del('LRODeleteAsyncRetryCanceled', '/lro/deleteasync/retry/canceled', 'not_succeeded', { providerState: 'Canceled' }),
  del(
    'LRORetryErrorDelete202Accepted200Succeeded',
    '/lro/retryerror/delete/provisioning/202/accepted/200/succeeded',
    'succeeded',
    { result: FOO_SUCCEEDED },
  ),
  del('LRORetryErrorDelete202Retry200Succeeded', '/lro/retryerror/delete/202/retry/200', 'succeeded', {
    result: FOO_SUCCEEDED,
  }),
  del('LRORetryErrorDeleteAsyncRetrySucceeded', '/lro/retryerror/deleteasync/retry/succeeded', 'succeeded'),
  del('LRONonRetryDelete400', '/lro/nonretryerror/delete/400', 'not_succeeded'),
  del('LRONonRetryDelete202Retry400', '/lro/nonretryerror/delete/202/retry/400', 'not_succeeded'),
  del('LRONonRetryDeleteAsyncRetry400', '/lro/nonretryerror/deleteasync/retry/400', 'not_succeeded'),
  // Named "Error", but the description says it: "a 204 to the initial request, indicating success".
  del('LROErrorDeleteNoLocation', '/lro/error/delete/204/nolocation', 'succeeded'),
  del('LROErrorDelete202RetryInvalidHeader', '/lro/error/delete/202/retry/invalidheader', 'not_succeeded'),
  del('LROErrorDeleteAsyncNoPollingStatus', '/lro/error/deleteasync/retry/nostatus', 'not_succeeded'),
  del('LROErrorDeleteAsyncInvalidHeader', '/lro/error/deleteasync/retry/invalidheader', 'not_succeeded'),
  del('LROErrorDeleteAsyncInvalidJsonPolling', '/lro/error/deleteasync/retry/invalidjsonpolling', 'not_succeeded'),

  // POST: ARM's default final-state-via location; a Location poll's final answer is the result, if it has one.
  post('LROPostSuccededWithBody', '/lro/post/202/retry/200', 'succeeded', { result: FOO_SUCCEEDED }),
  post('LROPostSuccededNoBody', '/lro/post/202/noretry/204', 'succeeded'),
  post('LROPost200', '/lro/post/payload/200', 'succeeded', { result: { id: '1', name: 'product' } }),
  post('LROPostDoubleHeadersFinalLocationGet', '/lro/LROPostDoubleHeadersFinalLocationGet', 'succeeded', {
    result: FOO,
    counters: [
      'LROPostDoubleHeadersFinalLocationPost',
      'LROPostDoubleHeadersFinalLocationAsync',
      'LROPostDoubleHeadersFinalLocationGet',
    ],
  }),
  {
    name: 'LROPostDoubleHeadersFinalAzureHeaderGet',
    convention: 'azure-post-async',
    method: 'POST',
    route: '/lro/LROPostDoubleHeadersFinalAzureHeaderGet',
    expected: 'succeeded',
    result: { status: 'succeeded', id: '100' },
  },
  post(
    'LROPostDoubleHeadersFinalAzureHeaderGetDefault',
    '/lro/LROPostDoubleHeadersFinalAzureHeaderGetDefault',
    'succeeded',
    { result: FOO },
  ),
  post('LROPostAndGetList', '/lro/list', 'succeeded', { result: [FOO] }),
  post('LROPostAsyncRetrySucceeded', '/lro/postasync/retry/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  post('LROPostAsyncNoRetrySucceeded', '/lro/postasync/noretry/succeeded', 'succeeded', { result: FOO_SUCCEEDED }),
  post('LROPostAsyncRetryFailed', '/lro/postasync/retry/failed', 'not_succeeded', { providerState: 'Failed' }),
  post('LROPostAsyncRetryCanceled', '/lro/postasync/retry/canceled', 'not_succeeded', { providerState: 'Canceled' }),
  post('LRORetryErrorPost202Retry200Succeeded', '/lro/retryerror/post/202/retry/200', 'succeeded', {
    result: FOO_SUCCEEDED,
  }),
  post('LRORetryErrorPostAsyncRetrySucceeded', '/lro/retryerror/postasync/retry/succeeded', 'succeeded', {
    result: SKU,
  }),
  post('LRONonRetryPost400', '/lro/nonretryerror/post/400', 'not_succeeded'),
  post('LRONonRetryPost202Retry400', '/lro/nonretryerror/post/202/retry/400', 'not_succeeded'),
  post('LRONonRetryPostAsyncRetry400', '/lro/nonretryerror/postasync/retry/400', 'not_succeeded'),
  // A 202 without any URL to poll: nothing can tell when the job ends.
  post('LROErrorPostNoLocation', '/lro/error/post/202/nolocation', 'not_succeeded'),
  post('LROErrorPost202RetryInvalidHeader', '/lro/error/post/202/retry/invalidheader', 'not_succeeded'),
  post('LROErrorPostAsyncNoPollingPayload', '/lro/error/postasync/retry/nopayload', 'not_succeeded'),
  post('LROErrorPostAsyncInvalidHeader', '/lro/error/postasync/retry/invalidheader', 'not_succeeded'),
  post('LROErrorPostAsyncInvalidJsonPolling', '/lro/error/postasync/retry/invalidjsonpolling', 'not_succeeded'),
  post('CustomHeaderPostAsyncSucceded', '/lro/customheader/postasync/retry/succeeded', 'succeeded', {
    headers: CLIENT_REQUEST_ID,
  }),
  post('CustomHeaderPostSucceeded', '/lro/customheader/post/202/retry/200', 'succeeded', {
    headers: CLIENT_REQUEST_ID,
  }),
  post('LROParameterizedEndpoint', '/lroParameterizedEndpoints', 'succeeded', { result: 'success' }),
  post('LROConstantParameterized', '/lroConstantParameterizedEndpoints/iAmConstant', 'succeeded', {
    result: 'success',
    counters: ['LROConstantParameterizedPost', 'LROConstantParameterizedGet'],
  }),
  {
    name: 'PagingMultipleLRO',
    convention: 'azure-post-paged',
    method: 'POST',
    route: '/paging/multiple/lro',
    expected: 'succeeded',
    result: Array.from({ length: 10 }, (_, i) => ({
      properties: { id: i + 1, name: i === 0 ? 'Product' : 'product' },
    })),
  },
];

/** LRO coverage counters of the server left out of N, with the reason (listed in the README). */
export const EXCLUDED: readonly { counter: string; reason: string }[] = [
  {
    counter: 'MultiapiLRO',
    reason:
      'optional multi-API-version code-generation check (one api-version per client); its LRO is a PUT answered 200 at once, already covered by LROPut200InlineCompleteNoState',
  },
  {
    counter: 'MultiapiLROAndPaging',
    reason: 'optional multi-API-version code-generation check; its paged LRO is covered by PagingMultipleLRO',
  },
];

/** Whether a coverage counter of the server belongs to an LRO scenario (so it must be run or excluded). */
export function isLroCounter(counter: string): boolean {
  return counter.includes('LRO') || /^CustomHeader(Put|Post)/.test(counter);
}

/** LRO counters of the server that no scenario raises and no exclusion names (empty for the pinned version). */
export function unmappedCounters(counters: readonly string[]): string[] {
  const mapped = new Set([...SCENARIOS.flatMap(countersOf), ...EXCLUDED.map((e) => e.counter)]);
  return counters.filter((c) => isLroCounter(c) && !mapped.has(c));
}

/** The coverage counters a scenario must raise. */
export function countersOf(scenario: Scenario): string[] {
  return scenario.counters ?? [scenario.name];
}

/** The deterministic subset the vitest test runs: one PUT, one PATCH, one POST, one DELETE and one sad path. */
export const SUBSET: readonly string[] = [
  'LROPutSucceededWithBody',
  'LROPatch201WithAsyncHeader',
  'LROPostDoubleHeadersFinalLocationGet',
  'LRODeleteAsyncRetrySucceeded',
  'LROPutAsyncRetryFailed',
];
