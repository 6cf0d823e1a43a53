// The older framework majors the adapters are tested against, installed under aliases (express4, koa2):
// Express 4 keeps the API @types/express describes for everything the tests use.
declare module 'express4' {
  import express = require('express');
  export = express;
}

// Koa 2 has the API @types/koa describes for what the tests use (Koa 3 dropped only generator middleware).
declare module 'koa2' {
  import Koa = require('koa');
  export = Koa;
}
