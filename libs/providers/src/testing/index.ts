export * from './canonical-fixtures';
export * from './fake-upstream';
export { EchoAdapter } from './echo/echo.adapter';
