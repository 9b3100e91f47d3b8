/**
 * Typed search attribute keys (names from `src/core/search-attribute-names.ts`), so operators can find
 * operations in the Web UI: `AsyncJobState = "escalated" AND AsyncJobEscalationReason = "rate_limited"`.
 */
// @temporalio/common is deterministic and part of the workflow bundle; these two are not re-exported by @temporalio/workflow.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const stateKey = defineSearchAttributeKey('AsyncJobState', SearchAttributeType.KEYWORD);
export const providerKey = defineSearchAttributeKey('AsyncJobProvider', SearchAttributeType.KEYWORD);
export const providerJobIdKey = defineSearchAttributeKey('AsyncJobProviderJobId', SearchAttributeType.KEYWORD);
export const escalationReasonKey = defineSearchAttributeKey('AsyncJobEscalationReason', SearchAttributeType.KEYWORD);
export const resultDeadlineKey = defineSearchAttributeKey('AsyncJobResultDeadline', SearchAttributeType.DATETIME);
