/**
 * `asyncjob`: the whole public API: the client (`asyncjob/client`), the worker side (`asyncjob/worker`) and the
 * simulator for integration tests (`asyncjob/testing`). Importing a narrower entry loads only its side.
 */
import './supported-node';
export * from './client-api';
export * from './worker-api';
export * from './testing';
