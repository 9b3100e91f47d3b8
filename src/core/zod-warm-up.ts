/**
 * Run once per reusable V8 context, when the workflow bundle preloads its shared libraries (`workflow-bundle.ts`):
 * zod sets a few values in its module state on first use (its default locale and memoizer), and the SDK freezes
 * shared modules once they are loaded, so they are set here first, parsing one object schema. And in workflows zod
 * parses without compiling a parser per schema (`jitless`): a workflow builds its schemas anew and parses with each
 * a few times, so compiling cost more than it saved. Nothing imports this module; activities and clients keep
 * zod's default.
 */
import { z } from 'zod';

z.config({ jitless: true });
z.object({ warm: z.string(), up: z.number().int().min(0) }).safeParse({ warm: 'zod', up: 1 });
