/** An editor extension: reads two variables on first activation, then keeps them in secure storage. */
import type { ConnectRecipe } from '../../connect/types.js';
import { TOKEN_ENV } from '../../connect/hooks.js';
import type { ClientProfile } from '../types.js';

const recipe: ConnectRecipe = {
  summary: 'Extensions that keep the token in the editor\'s secret storage: ENGRAM_AGENT_URL and ENGRAM_TOKEN, read once, on first activation',
  plan(input) {
    return {
      env: { ENGRAM_AGENT_URL: input.agent.baseUrl, [TOKEN_ENV]: '' },
      notes: [
        'Start the editor from a shell where both variables are exported. The extension reads them on its first activation and seeds its secure storage; later changes of the variables are not picked up.',
        'Nothing to write: the extension keeps no file of its own.',
      ],
    };
  },
};

export const editorExtension: ClientProfile = { id: 'editor-extension', title: 'Editor extension (VS Code, Cursor, Windsurf)', connect: recipe };
