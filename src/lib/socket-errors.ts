/** The codes Node gives a socket that could not connect or lost its connection: the server is away, not refusing a request. */
export const SOCKET_ERROR_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'] as const;
