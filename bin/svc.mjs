#!/usr/bin/env node
// The `svc` bin: runs the compiled CLI when built (npm run build), else the TypeScript source
// (Node >= 24 strips types natively).
import { existsSync } from 'node:fs';
process.env.SVC_CLI_ENTRY = '1';
const dist = new URL('../dist/main.js', import.meta.url);
await import(existsSync(dist) ? dist.href : new URL('../src/main.ts', import.meta.url).href);
