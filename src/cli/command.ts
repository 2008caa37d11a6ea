/** What every `engram` sub-command is made of, and the helpers they share. */
import type { ParseArgsConfig } from 'node:util';
import type { ApiClient } from './api-client.js';
import { UsageError } from './errors.js';

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export interface CommandContext {
  values: OptionValues;
  positionals: string[];
  io: Io;
  /** The API client with the resolved server URL and token; created on first use. */
  api(): ApiClient;
}

export interface Command {
  /** Words that select the command, e.g. `['agent', 'create']`. */
  path: string[];
  /** Arguments and options shown in the usage line. */
  synopsis: string;
  summary: string;
  options?: OptionsConfig;
  /** Number of positional arguments accepted (default 0). */
  positionals?: number;
  /** Commands that talk to a server get --url, --admin-token, --data-dir, --host, --port. */
  remote?: boolean;
  run(context: CommandContext): Promise<void>;
}

export function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function requireOption(context: CommandContext, name: string): string {
  const value = stringOption(context, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function flag(context: CommandContext, name: string): boolean {
  return context.values[name] === true;
}

export function listOption(context: CommandContext, name: string): string[] {
  const value = context.values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

export function positional(context: CommandContext, index: number, name: string): string {
  const value = context.positionals[index];
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

export function integerOption(context: CommandContext, name: string): number | undefined {
  const raw = stringOption(context, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** A decimal number from 0 to 1 (`0.25`, `.3`, `1`). */
export function fractionOption(context: CommandContext, name: string): number | undefined {
  const raw = stringOption(context, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw) || value > 1) throw new UsageError(`--${name} must be a number from 0 to 1, got "${raw}"`);
  return value;
}

/** `fields` without those that are undefined (options not given): a request body of what was asked for. */
export function given(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** `?a=1&b=x` of the parameters that have a value (in the order given), or '' when none has. */
export function queryString(params: Record<string, string | number | undefined>): string {
  const given = Object.entries(params).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]]));
  const query = new URLSearchParams(given).toString();
  return query === '' ? '' : `?${query}`;
}

/** A path segment: org and agent names may hold any character but "/". */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** `/v0/orgs/<org>/agents/<agent>` from --org and --agent. */
export function agentPath(context: CommandContext): string {
  return `/v0/orgs/${seg(requireOption(context, 'org'))}/agents/${seg(requireOption(context, 'agent'))}`;
}

export const JSON_OPTION: OptionsConfig = { json: { type: 'boolean' } };
export const AGENT_OPTIONS: OptionsConfig = { org: { type: 'string' }, agent: { type: 'string' }, ...JSON_OPTION };
