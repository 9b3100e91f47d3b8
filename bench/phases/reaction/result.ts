/** Figure 5's result, as `results.json` holds it under `reaction`. */
import type { LatencySummary, ServerLoad } from '../../lib/server-load';
import type { WorkerReady } from '../../lib/worker-process';

/** One webhook posted by the bench and the confirming status read it caused. */
export interface WebhookSample {
  operationId: string;
  jobId: string;
  /** The job's create request at the simulator, ms since the epoch. */
  createdAtMs: number;
  /** The bench's clock just before it posted the signed webhook to the receiver, and when the answer came. */
  postedAtMs: number;
  answeredAtMs: number;
  /** The first status read of the job the simulator received at or after `postedAtMs`. */
  readAtMs: number;
  /** `readAtMs - postedAtMs`. */
  reactionMs: number;
  /** Whether that read came before the earliest read the policy could have planned (so it is the webhook's). */
  beforePlannedRead: boolean;
}

/** Where one reaction's time went, from the operation's history (server times), ms. */
export interface ReactionBreakdown {
  /** How the confirming read was sent: by an activity the workflow scheduled after the signal, or by one already running. */
  path: 'activity_after_signal' | 'activity_already_running';
  /** Posted -> the signal in the history (the receiver's check, its store write, the signal RPC). */
  receiverToSignalMs: number;
  /** Signal -> the next workflow task started (scheduling and a worker taking it). */
  signalToWorkflowTaskMs?: number;
  /** That workflow task, started -> completed (the workflow's code and its local activities). */
  workflowTaskMs?: number;
  /** The read's activity, scheduled -> started (activity dispatch). */
  activityDispatchMs?: number;
  /** The read's activity started -> the read at the simulator (the activity's work before sending). */
  activityToReadMs?: number;
  /** For a read sent by an activity already running: signal -> the read at the simulator. */
  signalToReadMs?: number;
}

/** Figure 5. */
export interface ReactionResult {
  policy: { baseDelayMs: number; maxDelayMs: number };
  /** The status loop the worker offered (a webhook wakes a waiting loop in the receiver's process), or false. */
  statusLoop: WorkerReady['pollLoop'];
  /** The job finishes this long after its create; the webhook is posted once it has. */
  jobRunsMs: number;
  /** One start every this many ms. */
  startSpacingMs: number;
  /** The role of each operation in turn (repeating): told by webhook, cancelled, or polled (the baseline). */
  roles?: string[];
  webhook: {
    samples: number;
    /** Webhook arrival (the bench's clock just before posting) -> the confirming status read at the simulator. */
    reaction: LatencySummary;
    /** The receiver's answer (posted -> answered), ms. */
    receiverAnswer: LatencySummary;
    /** Samples whose read came after the earliest planned read (not provably the webhook's). */
    notBeforePlannedRead: number;
    /** Per segment over the samples of each path, and how many took each path. */
    breakdown: {
      paths: Record<ReactionBreakdown['path'], number>;
      receiverToSignal: LatencySummary;
      signalToWorkflowTask: LatencySummary;
      workflowTask: LatencySummary;
      activityDispatch: LatencySummary;
      activityToRead: LatencySummary;
      signalToRead: LatencySummary;
    };
  };
  /** The baseline: no webhook, the job finishing -> the first status read after it (the policy's wait). */
  polling: { samples: number; reaction: LatencySummary };
  /**
   * Cancels sent while the operation's status loop waited in the worker process: the bench's clock just before
   * the client's cancel -> the provider's cancel request at the simulator; and the client's answer (the update).
   */
  cancel?: { samples: number; reaction: LatencySummary; clientAnswer: LatencySummary };
  /**
   * Webhooks that arrived while the status activity waited for its next attempt (a retry-driven wait): the signal path
   * (the workflow has the attempt cancelled and reads), arrival -> the confirming read, as `webhook`.
   */
  webhookInRetryWait?: {
    samples: number;
    reaction: LatencySummary;
    receiverAnswer: LatencySummary;
    notBeforePlannedRead: number;
  };
  /** The same, for operations cancelled while their status activity waited for its next attempt (a retry-driven wait). */
  cancelInRetryWait?: { samples: number; reaction: LatencySummary; clientAnswer: LatencySummary };
  /** The dev server and machine while all ran side by side. */
  server: ServerLoad;
  /** Each webhook sample (for a look at the slow ones). */
  samples: WebhookSample[];
}
