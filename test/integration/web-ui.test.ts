/**
 * The Temporal Web UI shows an escalated operation to an operator who has only the UI: found by its search
 * attribute, with the escalation message in the workflow's current details. Debian's chromium, driven by
 * playwright-core (no browser download); a screenshot is kept in test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHarness, type Harness } from '../workflows/harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const uiUrl = inject('temporalUiUrl');

describe.skipIf(!uiUrl || !existsSync(CHROMIUM))('Web UI: an operator finds an escalation without our tools', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('webui', { scenarios: { rest: { scripts: { review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] } } } } as never });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('E2: the escalated operation is listed by AsyncJobEscalationReason and its page shows the escalation message', async () => {
    const request = h.request('rest', { script: 'review' });
    await h.client.start(request);
    for (let i = 0; i < 300 && (await h.client.get(request.operationId).then((r) => r.localState, () => '')) !== 'escalated'; i++) await new Promise((r) => setTimeout(r, 50));
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const query = `AsyncJobEscalationReason="unknown_state" AND WorkflowId="${request.operationId}"`;
    // Visibility is eventually consistent: reload the list until the operation appears.
    let listed = false;
    for (let attempt = 0; attempt < 20 && !listed; attempt++) {
      await page.goto(`${uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
      listed = await page
        .getByText(request.operationId)
        .first()
        .waitFor({ timeout: 3_000 })
        .then(() => true, () => false);
    }
    expect(listed).toBe(true);
    const { runId } = await h.env.client.workflow.getHandle(request.operationId).describe();
    await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(request.operationId)}/${runId}/history`, { waitUntil: 'load' });
    const dir = path.join(__dirname, '..', '..', 'test-artifacts');
    mkdirSync(dir, { recursive: true });
    try {
      // The escalation message is the workflow's current details, under "User Metadata".
      await page.getByText('User Metadata', { exact: true }).first().click({ timeout: 20_000 });
      await expect.poll(async () => (await page.content()).includes('unknown_state'), { timeout: 20_000 }).toBe(true);
      await expect.poll(async () => (await page.content()).includes('manual_review'), { timeout: 20_000 }).toBe(true);
    } finally {
      await page.screenshot({ path: path.join(dir, 'web-ui-escalation.png'), fullPage: true });
    }
  });
});
