/**
 * The names of Engram's MCP tools (part of Engram's interface: clients show them to
 * the model as `mcp__engram__recall`, `engram-recall`, ...), and the marker their
 * descriptions carry so that a client listing them under bare names (the Agents SDKs)
 * is still recognised as offering them.
 */
export const RECALL_TOOL = 'recall';
export const REMEMBER_TOOL = 'remember';
export const FORGET_TOOL = 'forget';
export const MEMORY_INDEX_TOOL = 'memory_index';
export const ENGRAM_TOOLS: readonly string[] = [RECALL_TOOL, REMEMBER_TOOL, FORGET_TOOL, MEMORY_INDEX_TOOL];

/** Ends every tool description: short, and unlikely in anybody else's tool. */
export const ENGRAM_TOOL_MARKER = '[engram-memory]';

/** The MCP server names under which detection recognises Engram (DESIGN section 1). */
export const DEFAULT_MCP_SERVER_NAMES: readonly string[] = ['engram', 'service'];

/** The root memory index as an MCP resource. */
export const MEMORY_INDEX_URI = 'engram://memory-index';
