/** Defaults of the limits that protect the process from one tenant (settings override them). */

/**
 * The default cap on one agent's reflections (`ENGRAM_MAX_REFLECTIONS`): far more than a
 * useful memory holds, low enough that one agent cannot fill the disk or, on the embedded
 * store, hold more than about 30 MB of vectors in memory.
 */
export const MAX_REFLECTIONS_PER_AGENT = 20_000;
