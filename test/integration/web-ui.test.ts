/**
 * The Temporal Web UI is enough for an operator: an escalated operation is found by its search attribute; the
 * escalation message is the workflow's current details, its exact bounds the `escalation` query of the Queries tab;
 * the escalation is answered from the UI's "Send a Signal" form with the decision JSON of docs/operating.md (an
 * invalid one refused and recorded, or refused at once by the "Send an Update" form); and the UI's "Request
 * Cancellation" becomes a recorded cancel intent. Debian's chromium, driven by playwright-core (no browser
 * download); a screenshot of every step is kept in test-artifacts/.
 *
 * The UI is the dev server's (`temporal server start-dev`, Web UI 2.54). Each dialog is opened on a freshly loaded
 * page: its JSON editor only reports edits, so a dialog reopened on the same page with the same text would send an
 * empty input. Every submission is checked by the request the UI sent and the answer it got, never by a delay.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StartRequest } from '../../src/core/operation';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { eventsOfEveryRun } from '../setup/temporal';
import { startHarness, type Harness } from '../workflows/harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const uiUrl = inject('temporalUiUrl');
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');

/** The operator's decider policy for these tests (docs/operating.md#who-may-decide). */
const DECIDER_POLICY = `version: 1
deciders:
  keys:
    alice@example.com: [ed25519:${'ab'.repeat(32)}]
  groups:
    operators: [alice@example.com, operator@example.com]
  rules:
    - name: operators-decide
      who: [group:operators]
      options: [extend, keep_bounds, cancel_at_provider, close, accept_result, retry_collect, inspect_provider_console]
  signaturesRequired:
    options: [cancel_at_provider]
`;

/** The first plain `extend` decision docs/operating.md shows (a ```json decision block), as its text. */
function documentedExtend(): string {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'operating.md'), 'utf8');
  for (const [, text] of doc.matchAll(/^```json decision\n([\s\S]*?)\n```$/gm)) {
    const keys = Object.keys(JSON.parse(text!) as object)
      .sort()
      .join(',');
    if (
      keys === 'approvedBy,extendMs,extraStatusRequests,option,reason' &&
      (JSON.parse(text!) as { option: string }).option === 'extend'
    )
      return text!;
  }
  throw new Error('docs/operating.md shows no extend decision');
}

describe.skipIf(!uiUrl || !existsSync(CHROMIUM))(
  'Web UI: an operator finds and answers an escalation without our tools',
  () => {
    let h: Harness;
    let browser: Browser;

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const scripts = {
        // Escalates unknown_state on the second read; after an extension, the next read says succeeded.
        review: {
          steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
        },
        // Runs until cancelled; the provider confirms the cancel 50 ms after it is asked.
        cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      };
      // Who may decide: the operators below, any option; a cancel at the provider only signed (D2, D3).
      const policyFile = path.join(mkdtempSync(path.join(tmpdir(), 'asyncjob-webui-')), 'policy.yaml');
      writeFileSync(policyFile, DECIDER_POLICY);
      h = await startHarness('webui', {
        scenarios: { rest: { scripts } } as never,
        deciders: loadDeciderPolicy(policyFile),
      });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
    });
    afterAll(async () => {
      await browser?.close();
      await h?.stop();
    });

    /** Starts an operation and waits until the workflow reports `state`. */
    async function startUntil(request: StartRequest, ...states: string[]): Promise<void> {
      await h.client.start(request);
      await expect
        .poll(
          () =>
            h.client.get(request.operationId).then(
              (r) => r.localState,
              () => '',
            ),
          { timeout: 30_000, interval: 100 },
        )
        .toBeOneOf(states);
    }

    /** Opens the workflow's page (its current run), as an operator following a link from the list. */
    async function openWorkflow(page: Page, operationId: string, tab = 'history'): Promise<void> {
      const { runId } = await h.env.client.workflow.getHandle(operationId).describe();
      await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(operationId)}/${runId}/${tab}`, {
        waitUntil: 'load',
      });
    }

    /** The page's visible text, with its frames' (the current details are rendered in a frame of their own). */
    async function visibleText(page: Page): Promise<string> {
      const texts = await Promise.all(
        page.frames().map((f) => f.evaluate<string>('document.body ? document.body.innerText : ""').catch(() => '')),
      );
      return texts.join('\n');
    }

    /** Waits until the page shows `text` (the UI renders what it fetched a moment later). */
    async function shows(page: Page, text: string): Promise<void> {
      await expect.poll(() => visibleText(page), { timeout: 20_000, interval: 200 }).toContain(text);
    }

    async function shot(page: Page, name: string): Promise<void> {
      await page.screenshot({ path: path.join(ARTIFACTS, `web-ui-${name}.png`), fullPage: true });
    }

    /**
     * Opens "Send a Signal" or "Send an Update" from "More Actions", picks `name` from the names the worker
     * declares, pastes `json` into the Data editor and submits. Returns the UI's request's answer.
     */
    async function submitMessage(
      page: Page,
      kind: 'signal' | 'update',
      name: string,
      json: string,
      screenshot: string,
    ): Promise<Response> {
      await page.getByRole('button', { name: 'More Actions' }).click();
      await page.getByRole('menuitem', { name: kind === 'signal' ? 'Send a Signal' : 'Send an Update' }).click();
      // The page keeps a hidden copy of each dialog; the open one is the operator's.
      const dialog = page.locator(`dialog[open][data-testid="${kind}-confirmation-modal"]`);
      await dialog.getByTestId(`${kind}-select-button`).click();
      await dialog.getByRole('option', { name, exact: true }).click();
      await dialog.getByRole('textbox', { name: 'Data' }).fill(json);
      // For the screenshot: the list of names closed, the Submit button enabled (clicking waits for it anyway).
      await expect.poll(() => dialog.getByRole('listbox').first().isVisible()).toBe(false);
      await expect.poll(() => dialog.getByTestId('confirm-modal-button').isEnabled()).toBe(true);
      await shot(page, screenshot);
      const answered = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().includes(`/${kind}/${name}`),
        { timeout: 20_000 },
      );
      await dialog.getByTestId('confirm-modal-button').click();
      return answered;
    }

    /** The JSON the UI sent as the message's single argument. */
    function sentPayload(response: Response): unknown {
      const body = JSON.parse(response.request().postData() ?? '{}') as {
        input?: { payloads?: { data: string }[]; args?: { payloads?: { data: string }[] } };
        request?: { input?: { args?: { payloads?: { data: string }[] } } };
      };
      const payloads = body.input?.payloads ?? body.request?.input?.args?.payloads ?? [];
      expect(payloads).toHaveLength(1);
      return JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString('utf8'));
    }

    async function decisions(operationId: string) {
      return (await h.store.entries(operationId)).map((e) => e.entry.body).filter((b) => b.kind === 'decision');
    }

    it('E2: the escalated operation is listed by AsyncJobEscalationReason and its page shows the escalation message', async () => {
      const request = h.request('rest', { script: 'review' });
      await startUntil(request, 'escalated');
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const query = `AsyncJobEscalationReason="unknown_state" AND WorkflowId="${request.operationId}"`;
      // Visibility is eventually consistent: first wait until the server's list answers with the operation (what
      // the UI's list asks for), then load the list once and wait for it to be rendered.
      await expect
        .poll(
          async () => {
            for await (const found of h.env.client.workflow.list({ query })) return found.workflowId;
            return '';
          },
          { timeout: 60_000, interval: 200 },
        )
        .toBe(request.operationId);
      await page.goto(`${uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`, {
        waitUntil: 'load',
      });
      try {
        await page.getByText(request.operationId).first().waitFor({ timeout: 60_000 });
      } finally {
        await shot(page, 'escalation-list');
      }
      await openWorkflow(page, request.operationId);
      try {
        // The escalation message is the workflow's current details, under "User Metadata".
        await page.getByText('User Metadata', { exact: true }).first().click({ timeout: 20_000 });
        await shows(page, 'Escalated: unknown_state');
        await shows(page, 'Last state: manual_review');
        // ... ending with the exact commands that answer it.
        await shows(page, `asyncjob decide ${request.operationId} --option extend`);
      } finally {
        await shot(page, 'escalation');
      }
      await page.close();
    });

    it(
      'A1, A2: the operator answers from "Send a Signal" with the decision JSON of docs/operating.md; invalid ones are refused',
      { timeout: 180_000 },
      async () => {
        const request = h.request('rest', { script: 'review', resultDeadline: { afterMs: 600_000 } });
        await startUntil(request, 'escalated');
        // The bounds come from the escalation (the operator reads them in the current details).
        const escalation = await h.client.escalation(request.operationId);
        expect(escalation?.reason).toBe('unknown_state');
        const extend = escalation!.options.find((o) => o.option === 'extend')!;
        expect(extend).toMatchObject({ extendMs: expect.any(Number), extraStatusRequests: expect.any(Number) });
        const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
        const approvedBy = 'operator@example.com';

        // 0. The exact bounds in the UI: the `escalation` query on the Queries tab.
        await openWorkflow(page, request.operationId, 'query');
        await page.getByTestId('query-select-button').first().click();
        await page.getByRole('option', { name: 'escalation', exact: true }).click();
        await page.getByRole('button', { name: 'Run Query' }).click();
        await shows(page, `"extendMs": ${extend.extendMs}`);
        await shows(page, `"extraStatusRequests": ${extend.extraStatusRequests}`);
        await shot(page, 'decide-1-escalation-query');

        // 1. "Send an Update" (decideOperation) with more checks than offered: refused at once, in the dialog.
        await openWorkflow(page, request.operationId);
        const tooMuch = {
          option: 'extend',
          approvedBy,
          reason: 'more checks than offered',
          extendMs: extend.extendMs!,
          extraStatusRequests: extend.extraStatusRequests! + 1,
        };
        const refusedUpdate = await submitMessage(
          page,
          'update',
          'decideOperation',
          JSON.stringify(tooMuch, null, 2),
          'decide-2-update-form',
        );
        expect(refusedUpdate.status()).toBe(200);
        expect(sentPayload(refusedUpdate)).toEqual(tooMuch);
        // The refusal's code is the failure's type, and leads the message the operator reads.
        expect(await refusedUpdate.json()).toMatchObject({
          outcome: {
            failure: {
              message: expect.stringContaining('ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS: extraStatusRequests'),
              applicationFailureInfo: { type: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS' },
            },
          },
        });
        const updateDialog = page.locator('dialog[open][data-testid="update-confirmation-modal"]');
        await updateDialog
          .getByText('ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS: extraStatusRequests', { exact: false })
          .first()
          .waitFor({ timeout: 20_000 });
        await shot(page, 'decide-3-update-refused');
        // Refused by the main loop, which recorded it (A2); nothing else changed.
        expect((await h.client.get(request.operationId)).localState).toBe('escalated');
        const updateRefusal = expect.objectContaining({
          decision: 'extend',
          accepted: false,
          route: 'api',
          rejectionReason: expect.stringContaining('ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS'),
        });
        expect(await decisions(request.operationId)).toEqual([updateRefusal]);

        // 2. "Send a Signal" (decide) with an option that was not offered: the signal is delivered, the decision is
        // refused and recorded with its reason, and the operation stays escalated.
        await openWorkflow(page, request.operationId);
        const notOffered = { option: 'accept_result', approvedBy, reason: 'not offered for unknown_state' };
        const refusedSignal = await submitMessage(
          page,
          'signal',
          'decide',
          JSON.stringify(notOffered, null, 2),
          'decide-4-signal-not-offered',
        );
        expect(refusedSignal.status()).toBe(200);
        expect(sentPayload(refusedSignal)).toEqual(notOffered);
        await page.getByText('Workflow signaled.').first().waitFor({ timeout: 20_000 });
        await shot(page, 'decide-5-signal-not-offered-sent');
        await expect
          .poll(() => decisions(request.operationId), { timeout: 20_000, interval: 100 })
          .toEqual([
            updateRefusal,
            expect.objectContaining({
              decision: 'accept_result',
              approvedBy,
              accepted: false,
              rejectionReason: expect.stringContaining('ASYNCJOB_ERR_OPTION_NOT_OFFERED'),
            }),
          ]);
        expect((await h.client.get(request.operationId)).localState).toBe('escalated');

        // 3. "Send a Signal" (decide) with the extension docs/operating.md shows, with the offered bounds (the document
        // shows the default ones, so its text is pasted as it stands): accepted; the operation leaves `escalated` and finishes.
        await openWorkflow(page, request.operationId);
        const documented = documentedExtend();
        const example = JSON.parse(documented) as {
          option: string;
          approvedBy: string;
          reason: string;
          extendMs: number;
          extraStatusRequests: number;
        };
        const pasted =
          example.extendMs === extend.extendMs && example.extraStatusRequests === extend.extraStatusRequests
            ? documented
            : JSON.stringify(
                { ...example, extendMs: extend.extendMs, extraStatusRequests: extend.extraStatusRequests },
                null,
                2,
              );
        const decision = JSON.parse(pasted) as typeof example;
        const signalled = await submitMessage(page, 'signal', 'decide', pasted, 'decide-6-signal-form');
        expect(signalled.status()).toBe(200);
        expect(sentPayload(signalled)).toEqual(decision);
        await page.getByText('Workflow signaled.').first().waitFor({ timeout: 20_000 });
        await shot(page, 'decide-7-signal-sent');

        // A signal is not waited on: the escalation may still be open when the UI says "signaled".
        const summary = await h.client.result(request.operationId, { untilFinal: true });
        expect(summary.localState).toBe('succeeded');
        const record = await h.client.get(request.operationId);
        expect(record.escalation).toBeNull();
        expect(record.authorisation.approvals.at(-1)).toMatchObject({
          approvedBy: decision.approvedBy,
          option: 'extend',
          reason: decision.reason,
        });
        expect(await decisions(request.operationId)).toEqual([
          updateRefusal,
          expect.objectContaining({ decision: 'accept_result', accepted: false }),
          expect.objectContaining({
            decision: 'extend',
            approvedBy: decision.approvedBy,
            reason: decision.reason,
            accepted: true,
            bounds: { extendMs: decision.extendMs, extraStatusRequests: decision.extraStatusRequests },
          }),
        ]);
        const transitions = (await h.store.entries(request.operationId))
          .map((e) => e.entry.body)
          .flatMap((b) => (b.kind === 'transition' ? [`${b.from}->${b.to}`] : []));
        expect(transitions).toContain('escalated->observing');
        expect(transitions.at(-1)).toBe('result_collecting->succeeded');
        // The history keeps both signals as the UI sent them.
        const events = await eventsOfEveryRun(h.env.client, request.operationId);
        expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'decide')).toHaveLength(
          2,
        );

        await openWorkflow(page, request.operationId, 'user-metadata');
        await shows(page, 'State succeeded');
        await shot(page, 'decide-8-succeeded');
        await page.close();
      },
    );

    it('D3: where the policy requires a signature, an unsigned decision from the UI is refused with the asyncjob decide command to run', async () => {
      const request = h.request('rest', { script: 'review', resultDeadline: { afterMs: 600_000 } });
      await startUntil(request, 'escalated');
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const cancel = {
        option: 'cancel_at_provider',
        approvedBy: 'alice@example.com',
        reason: 'the report is not needed',
      };
      const command = `asyncjob decide ${request.operationId} --option cancel_at_provider --by alice@example.com --reason "the report is not needed" --sign`;

      // "Send an Update": refused in the dialog, naming the command, and journalled (A2).
      await openWorkflow(page, request.operationId);
      const refusedUpdate = await submitMessage(
        page,
        'update',
        'decideOperation',
        JSON.stringify(cancel, null, 2),
        'signed-1-update-form',
      );
      expect(await refusedUpdate.json()).toMatchObject({
        outcome: { failure: { applicationFailureInfo: { type: 'ASYNCJOB_ERR_SIGNATURE_REQUIRED' } } },
      });
      await page
        .locator('dialog[open][data-testid="update-confirmation-modal"]')
        .getByText(command, { exact: false })
        .first()
        .waitFor({ timeout: 20_000 });
      await shot(page, 'signed-2-update-refused');

      // "Send a Signal": delivered, refused, journalled with its route and the command; nothing was cancelled.
      await openWorkflow(page, request.operationId);
      const signalled = await submitMessage(
        page,
        'signal',
        'decide',
        JSON.stringify(cancel, null, 2),
        'signed-3-signal',
      );
      expect(signalled.status()).toBe(200);
      await page.getByText('Workflow signaled.').first().waitFor({ timeout: 20_000 });
      await expect
        .poll(() => decisions(request.operationId), { timeout: 20_000, interval: 100 })
        .toEqual(
          (['api', 'web-ui'] as const).map((route) =>
            expect.objectContaining({
              decision: 'cancel_at_provider',
              approvedBy: 'alice@example.com',
              accepted: false,
              route,
              rejectionReason: expect.stringContaining(`ASYNCJOB_ERR_SIGNATURE_REQUIRED`),
            }),
          ),
        );
      const refused = (await decisions(request.operationId)).at(-1);
      expect(refused?.kind === 'decision' && refused.rejectionReason).toContain(command);
      const record = await h.client.get(request.operationId);
      expect(record.localState).toBe('escalated');
      expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(record.jobId!))).toEqual([]);
      await page.close();
    });

    it('X1: "Request Cancellation" in the UI is a recorded cancel intent handled by the cancel rules, ending cancelled', async () => {
      // Slow polling, so the operation is still observing (and far from its budgets) when the operator clicks.
      const request = h.request('rest', {
        script: 'cancellable',
        resultDeadline: { afterMs: 600_000 },
        policy: {
          baseDelayMs: 1_000,
          maxDelayMs: 2_000,
          notFoundWindowMs: 2_000,
          cancelDeadlineMs: 30_000,
          maxHintMs: 60_000,
        },
      });
      await startUntil(request, 'accepted', 'observing');
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await openWorkflow(page, request.operationId);
      await page.getByRole('button', { name: 'Request Cancellation' }).click();
      const dialog = page.locator('dialog[open][data-testid="cancel-confirmation-modal"]');
      await dialog.getByTestId('confirm-modal-button').waitFor();
      await shot(page, 'cancel-1-confirm');
      const answered = page.waitForResponse(
        (r) =>
          r.request().method() === 'POST' &&
          r.url().includes(`/workflows/${encodeURIComponent(request.operationId)}/cancel`),
        { timeout: 20_000 },
      );
      await dialog.getByTestId('confirm-modal-button').click();
      expect((await answered).status()).toBe(200);
      await shot(page, 'cancel-2-requested');

      const summary = await h.client.result(request.operationId);
      // Not a bare workflow cancellation: the provider was asked once and said so.
      expect(summary.localState).toBe('cancelled');
      const record = await h.client.get(request.operationId);
      expect(record.cancel).toMatchObject({
        requestedBy: 'temporal:request-cancellation',
        reason: expect.stringContaining('WorkflowExecutionCancelRequested'),
      });
      expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(
        1,
      );
      const transitions = (await h.store.entries(request.operationId))
        .map((e) => e.entry.body)
        .flatMap((b) => (b.kind === 'transition' ? [b.to] : []));
      expect(transitions.slice(-3)).toEqual(['cancel_requested', 'cancelling', 'cancelled']);
      const handle = h.env.client.workflow.getHandle(request.operationId);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      // Who asked stays in the history's event (the Web UI 2.54 sends neither identity nor reason with it), in the
      // run it reached: a run slowed by a loaded machine may have continued as new since.
      const events = await eventsOfEveryRun(h.env.client, request.operationId);
      expect(events.filter((e) => e.workflowExecutionCancelRequestedEventAttributes)).toHaveLength(1);

      await openWorkflow(page, request.operationId, 'user-metadata');
      await shows(page, 'State cancelled');
      await shot(page, 'cancel-3-cancelled');
      await page.close();
    });
  },
);
