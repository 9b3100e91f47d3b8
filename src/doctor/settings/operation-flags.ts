/** The flags of the commands that drive operations: `start`, `watch`, `cancel`, `decide`, `list`. */
import { type Flag } from './flag';

/** `asyncjob start`. */
export const START_FLAGS: readonly Flag[] = [
  {
    name: '--provider',
    usedBy: ['start'],
    default: '',
    meaning: 'required: the provider (a name the worker serves)',
    example: '--provider reports',
  },
  {
    name: '--operation-id',
    usedBy: ['start'],
    default: '',
    meaning: 'required: our operation ID (also the workflow ID); the same request under it joins the run',
    example: '--operation-id report-2026-11-acme',
  },
  {
    name: '--payload',
    usedBy: ['start'],
    default: '',
    meaning: "required: the job's payload, JSON inline or `@FILE`",
    example: '--payload @report.json',
  },
  {
    name: '--started-by',
    usedBy: ['start'],
    default: '',
    meaning: 'required: who starts it',
    example: '--started-by service:billing',
  },
  {
    name: '--authorised-by',
    usedBy: ['start'],
    default: '',
    meaning: 'required: what authorises it',
    example: '--authorised-by policy:monthly-reports',
  },
  {
    name: '--create-deadline',
    usedBy: ['start'],
    default: '',
    meaning: 'required: until when the create may be tried: a duration from the start or an ISO-8601 instant',
    example: '--create-deadline 5m',
  },
  {
    name: '--result-deadline',
    usedBy: ['start'],
    default: '',
    meaning: 'required: until when a result is awaited (then it escalates)',
    example: '--result-deadline 2h',
  },
  {
    name: '--client-reference',
    usedBy: ['start'],
    default: '',
    meaning: 'a reference sent to the provider where the contract says (reconciliation by reference)',
    example: '--client-reference inv-2211',
  },
  {
    name: '--policy',
    usedBy: ['start'],
    default: "the provider's",
    meaning: 'poll policy overrides, JSON inline or `@FILE` (`baseDelayMs`, `maxDelayMs`, `maxStatusRequests`, ...)',
    example: '--policy \'{"maxStatusRequests":60}\'',
  },
  {
    name: '--wait',
    usedBy: ['start'],
    default: 'off',
    meaning: 'wait until the operation ends or escalates (exit 7: needs a decision) and exit by its state',
    example: '--wait',
  },
  {
    name: '--until-final',
    usedBy: ['start', 'watch'],
    default: 'off',
    meaning: 'with --wait (and for watch): wait past an escalation until the operation is final',
    example: '--wait --until-final',
  },
  {
    name: '--var',
    usedBy: ['start'],
    default: 'none',
    meaning:
      "an operation variable the provider's adapter declares, `NAME=VALUE` split at the first `=` (repeatable); recorded, so never a secret",
    example: '--var scope=subscriptions/s1/resourceGroups/rg1',
  },
  {
    name: '--allow-unserved-provider',
    usedBy: ['start'],
    default: 'off',
    meaning: "start even when no worker polls the provider's task queue now (a durable start during a worker outage)",
    example: '--allow-unserved-provider',
  },
];

/** `asyncjob watch`. */
export const WATCH_FLAGS: readonly Flag[] = [
  {
    name: '--interval',
    usedBy: ['watch'],
    default: '`1s`',
    meaning: 'how often the operation is read',
    example: '--interval 5s',
  },
];

/** `asyncjob cancel` and `asyncjob decide`. */
export const CANCEL_AND_DECIDE_FLAGS: readonly Flag[] = [
  {
    name: '--by',
    usedBy: ['cancel', 'decide'],
    default: '',
    meaning: 'required: who asks (recorded)',
    example: '--by alice@example.com',
  },
  {
    name: '--reason',
    usedBy: ['cancel', 'decide'],
    default: '',
    meaning: 'required: why (recorded)',
    example: '--reason "month end"',
  },
  {
    name: '--expected-effect',
    usedBy: ['cancel'],
    default: '',
    meaning: 'what the cancel should achieve (recorded)',
    example: '--expected-effect "the export stops"',
  },
  {
    name: '--option',
    usedBy: ['decide'],
    default: '',
    meaning: 'the option chosen, one of those offered (without it, decide shows them)',
    example: '--option extend',
  },
  {
    name: '--extend',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend`: how much longer, within the offered bound',
    example: '--extend 15m',
  },
  {
    name: '--checks',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend`: more status requests, within the offered bound',
    example: '--checks 4',
  },
  {
    name: '--transport-failures',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend` after `provider_failure`: more transport failures allowed',
    example: '--transport-failures 5',
  },
  {
    name: '--rate-limited',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend` after `rate_limited`: more consecutive 429s allowed',
    example: '--rate-limited 3',
  },
  {
    name: '--job-id',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `adopt_job`: the provider job kept',
    example: '--job-id job_7ad2',
  },
  {
    name: '--sign',
    usedBy: ['decide'],
    default: 'unsigned',
    meaning:
      "sign the decision with the decider's own key: `--by`'s key file in ASYNCJOB_DECIDER_KEYS_DIR, which `keys new` writes",
    example: '--sign',
  },
  {
    name: '--key',
    usedBy: ['decide'],
    default: 'unsigned',
    meaning: "sign the decision with the key in FILE, which must be `--by`'s",
    example: '--key /run/secrets/alice-decider-key.json',
  },
];

/** `asyncjob list`. */
export const LIST_FLAGS: readonly Flag[] = [
  {
    name: '--escalated',
    usedBy: ['list'],
    default: '',
    meaning: 'only escalated operations (as `--state escalated`)',
    example: 'asyncjob list --escalated',
  },
  {
    name: '--state',
    usedBy: ['list'],
    default: 'every state',
    meaning: 'only operations in this local state',
    example: '--state observing',
  },
  {
    name: '--provider',
    usedBy: ['list'],
    default: 'every provider',
    meaning: 'only operations at this provider',
    example: '--provider reports',
  },
  {
    name: '--reason',
    usedBy: ['list'],
    default: 'every reason',
    meaning: 'only escalations with this reason',
    example: '--reason rate_limited',
  },
  {
    name: '--limit',
    usedBy: ['list'],
    default: '`100`',
    meaning: 'at most this many operations',
    example: '--limit 20',
  },
];
