/**
 * The operation's inbox: signals and updates are queued here in arrival order and handled by the main loop between
 * outside calls; an update waits for its answer.
 */
import { CancellationScope, condition } from '@temporalio/workflow';
import type { MessageAnswer, PendingMessage } from './messages';

/** A pending message before it is given its arrival number. */
export type PendingMessageBody = PendingMessage extends infer Message
  ? Message extends PendingMessage
    ? Omit<Message, 'id'>
    : never
  : never;

/** Messages waiting for the main loop, and the answers of processed updates. */
export class MessageInbox {
  private readonly pending: PendingMessage[];
  /** Cancels held until the provider has the job (X5): answered already, processed again on every pass. */
  private readonly held: PendingMessage[] = [];
  private readonly answers = new Map<number, MessageAnswer>();
  private nextId: number;

  /** `carried`: the messages a previous run received but did not process (continue-as-new). */
  constructor(carried: readonly PendingMessage[] = []) {
    this.pending = [...carried];
    this.nextId = carried.reduce((max, message) => Math.max(max, message.id), 0) + 1;
  }

  /** Queues a message; returns its arrival number. */
  enqueue(message: PendingMessageBody): number {
    const id = this.nextId++;
    this.pending.push({ ...message, id } as PendingMessage);
    return id;
  }

  /**
   * Queues an update's message like a signal's and answers once the main loop has processed it. Shielded like the
   * loop: a Temporal cancellation request is a cancel message, not a reason to stop answering updates.
   */
  answerOnceProcessed(message: PendingMessageBody): Promise<MessageAnswer> {
    return CancellationScope.nonCancellable(async () => {
      const id = this.enqueue(message);
      await condition(() => this.answers.has(id));
      return this.answers.get(id)!;
    });
  }

  /** The oldest pending message, taken off the queue. */
  take(): PendingMessage | undefined {
    return this.pending.shift();
  }

  /** Keeps a message aside until {@link releaseHeld}: it does not wake the loop, and continue-as-new carries it. */
  hold(message: PendingMessage): void {
    this.held.push(message);
  }

  /** Puts the held messages back at the head of the queue, in arrival order, for the next pass. */
  releaseHeld(): void {
    this.pending.unshift(...this.held.splice(0).sort((a, b) => a.id - b.id));
  }

  /** Answers the update that sent message `id` (a signal's answer is never read). */
  answer(id: number, answer: MessageAnswer): void {
    this.answers.set(id, answer);
  }

  hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** The pending and held messages, in arrival order, for the next run (continue-as-new). */
  carried(): PendingMessage[] {
    return [...this.held, ...this.pending].sort((a, b) => a.id - b.id);
  }
}
