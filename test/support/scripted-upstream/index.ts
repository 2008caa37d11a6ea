export { echoReply, startScriptedUpstream } from './server.js';
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
  TaggedReflection,
  Tagger,
  TaggingLine,
  TextReply,
  ToolCallReply,
} from './types.js';
export { defaultTags, taggingLines } from './shared.js';
