/**
 * Entry point of the `engram` command (`npm start` runs `engram serve`; bin/engram.js
 * loads this file through tsx). Exits through `process.exitCode`, so piped output is
 * flushed before the process ends.
 */
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2));
