export { startScriptedUpstream } from './server.js';
export { encodeSseEvent } from './sse-writer.js';
export type {
  Answer,
  BreakReply,
  ErrorReply,
  ExtractedReflection,
  Extractor,
  HangReply,
  Protocol,
  RecordedRequest,
  Reply,
  ReplyOptions,
  ScriptedUpstream,
  ScriptedUpstreamOptions,
  TextReply,
  ToolCallReply,
} from './types.js';
