/**
 * What an adapter will send and read, step by step, in plain words: computed from the VALIDATED contract
 * (defaults applied, preset merged), never from the raw document, so it says what the worker will actually do.
 * `asyncjob adapter explain` prints it. Each section is built in its own module under `explain/`. Pure: no I/O,
 * no clock.
 */
import { type ProviderContract } from './contract';
import { cancelSection } from './explain/cancel-section';
import { createSection, jobSection } from './explain/create-sections';
import { type ContractExplanation, type ExplainOptions } from './explain/explanation';
import { policySection } from './explain/policy-section';
import { providerSection } from './explain/provider-section';
import { reconciliationSection } from './explain/reconciliation-section';
import { resultSection } from './explain/result-section';
import { statusSection } from './explain/status-section';
import { webhookSection } from './explain/webhook-section';

export type { ContractExplanation, ExplainOptions } from './explain/explanation';

/** The structured explanation of a validated contract, its sections in the order a job meets them. Pure. */
export function describeContract(contract: ProviderContract, options: ExplainOptions = {}): ContractExplanation {
  return {
    name: contract.name,
    description: contract.description ?? null,
    preset: options.preset ?? null,
    sections: [
      providerSection(contract, options),
      createSection(contract, options),
      jobSection(contract),
      statusSection(contract, options),
      resultSection(contract, options),
      cancelSection(contract, options),
      reconciliationSection(contract, options),
      webhookSection(contract),
      policySection(contract),
    ],
  };
}

/** Renders an explanation as text lines: a heading per section, its sentences indented. Pure. */
export function renderExplanation(explanation: ContractExplanation): string[] {
  const head = `${explanation.name}${explanation.preset !== null ? ` (preset ${explanation.preset})` : ''}${explanation.description !== null ? `: ${explanation.description}` : ''}`;
  const out = [head];
  explanation.sections.forEach((section, index) => {
    out.push('', `${index + 1}. ${section.title}`);
    for (const line of section.lines) out.push(`   ${line}`);
  });
  return out;
}

/** What the adapter will send and read, in plain words, one line per entry. Pure. */
export function explainContract(contract: ProviderContract, options: ExplainOptions = {}): string[] {
  return renderExplanation(describeContract(contract, options));
}
