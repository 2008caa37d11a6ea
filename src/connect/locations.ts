/** Where each client keeps its files, all derived from one home dir (tests pass a temp one). */
import path from 'node:path';
import type { Locations } from './types.js';

export interface LocationSettings {
  home: string;
  /** `$XDG_CONFIG_HOME`, when set and no explicit home was asked for. */
  configHome?: string;
  /** The variables a recipe reads (`ConnectRecipe.env`), likewise. */
  env?: Readonly<Record<string, string | undefined>>;
}

export function locations(settings: LocationSettings): Locations {
  const configHome = settings.configHome ?? path.join(settings.home, '.config');
  return {
    home: settings.home,
    configHome,
    env: settings.env ?? {},
    hooksDir: path.join(configHome, 'engram', 'hooks'),
  };
}
