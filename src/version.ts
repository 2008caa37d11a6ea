import { createRequire } from 'node:module';

/** The package's version, as MCP `serverInfo` and `engram --version` report it. */
export const ENGRAM_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
