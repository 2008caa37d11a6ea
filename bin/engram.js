#!/usr/bin/env node
// The installed `engram` command. Engram ships TypeScript sources run through tsx (a
// runtime dependency), so this registers tsx's loader in-process and imports the CLI.
// In-process registration resolves tsx from this package, wherever the command is
// called from; `node --import tsx` would resolve it from the caller's directory.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
