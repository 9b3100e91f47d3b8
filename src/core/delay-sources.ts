/** How each delay source (P4) reads in a story line or a timer's summary. Pure; imported by the workflow. */
import { type DelaySource, type LocalState } from './journal';

/** `next poll 10:22:31 from provider guidance`. */
export const DELAY_SOURCE_PHRASES: Readonly<Record<DelaySource, string>> = {
  provider_retry_after: 'from provider guidance',
  provider_poll_hint: 'from a provider hint',
  local_backoff: 'from local backoff',
  manual_extension: 'from a manual extension',
  webhook_hint: 'from a webhook',
  deadline: 'capped by the deadline',
};

const WAITING_FOR: Partial<Record<LocalState, string>> = {
  create_pending: 'next create attempt',
  create_unknown: 'next reconciliation',
  reconciliation: 'next reconciliation',
  cancel_requested: 'next cancel attempt',
  result_collecting: 'next collect attempt',
};

/** The summary of the timer (shown in the Web UI) an operation in `localState` waits on: what comes next, and why then. */
export function waitSummary(localState: LocalState, delaySource: DelaySource | undefined): string {
  const next = WAITING_FOR[localState] ?? 'next poll';
  return delaySource === undefined ? next : `${next}, ${DELAY_SOURCE_PHRASES[delaySource]}`;
}
