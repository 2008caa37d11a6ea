/**
 * How log lines are written (`ENGRAM_LOG_FORMAT`): JSON, one object a line, for log
 * collectors; or pretty (a time, a level and the message, then the fields), for a person
 * at a terminal. Pretty is rendered in this thread from the JSON line pino produced, so
 * the serializers that keep credentials out of the log (src/redaction/log-safety.ts) have
 * already run: both formats show the same, redacted, fields.
 */
import { prettyFactory } from 'pino-pretty';

export interface LineSink {
  write(line: string): void;
}

/** A pino destination writing pretty lines to `target` (stdout when absent; colours only on a terminal). */
export function prettyStream(target?: LineSink): LineSink {
  const colorize = target === undefined && process.stdout.isTTY === true;
  // One line per record: a proxy's log is read by scrolling past many requests.
  const pretty = prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  const out: LineSink = target ?? { write: (line) => void process.stdout.write(line) };
  return { write: (line) => out.write(pretty(line)) };
}
