/**
 * The injection evaluation's two sets: `tidewater` (`injection-set.ts`) calibrates the
 * relevance rule; `pawpath` (`injection-set-pawpath.ts`) was written blind to the
 * retrieval code and to the other set, and only measures the rule chosen on the first.
 */
import * as tidewater from './injection-set.js';
import * as pawpath from './injection-set-pawpath.js';
import type { InjectionSet } from './injection.js';

export const CALIBRATION_SET: InjectionSet = { name: 'tidewater', ...tidewater };
export const BLIND_SET: InjectionSet = { name: 'pawpath', ...pawpath };
export const SETS: readonly InjectionSet[] = [CALIBRATION_SET, BLIND_SET];
