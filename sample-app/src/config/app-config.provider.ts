/** Injection token of the app's AppConfig (see app-config.ts). */
export const APP_CONFIG = Symbol('APP_CONFIG');
