/**
 * Provider adapters: a provider's HTTP contract as validated data (JSON/YAML), the presets for the simulator's
 * dialects, and the pure functions that build requests and interpret answers into observations.
 */
export * from './adapter';
export * from './build';
export * from './contract';
export * from './errors';
export * from './field-path';
export * from './interpret';
export * from './load';
export { BUILT_IN_PRESETS, PRESET_NAMES } from './presets';
export { expandPreset } from './presets/expand';
