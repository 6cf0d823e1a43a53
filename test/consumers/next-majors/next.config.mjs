// The example app's config without its repository settings (turbopack.root, outputFileTracingRoot): the app is
// its own root here, with its own node_modules, and Next 13 and 14 know neither key.
/** @type {import('next').NextConfig} */
export default {};
