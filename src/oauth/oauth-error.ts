/**
 * OAuth's own errors (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707 §2, RFC 6750 §3.1): a
 * registered code, a description for the developer, the HTTP status. They are rendered
 * as OAuth bodies (`{ error, error_description }`) by the endpoints, as a redirect to the
 * client by the authorization endpoint once its redirect URI is known to be the client's,
 * and as `WWW-Authenticate` by the protected resource. Never carries a secret.
 */

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_token';

/** The status each code answers with when none is given: RFC 6749 §5.2 and RFC 6750 §3.1. */
const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
};

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;
  /**
   * Where the authorization endpoint sends the browser with this error (the client's
   * redirect URI with `error`, `error_description`, `state`, `iss`); undefined when the
   * redirect URI itself is unknown or not the client's, so the person sees a page instead.
   */
  readonly location: string | undefined;
  /** Seconds after which the same request may succeed (`Retry-After`), for a refusal that passes. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: OAuthErrorCode, description: string, options: { status?: number; location?: string; retryAfterSeconds?: number } = {}) {
    super(description);
    this.name = 'OAuthError';
    this.code = code;
    this.status = options.status ?? STATUS[code] ?? 400;
    this.location = options.location;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  body(): OAuthErrorBody {
    return { error: this.code, error_description: this.message };
  }
}
