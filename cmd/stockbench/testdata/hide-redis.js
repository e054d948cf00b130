// Preloaded with node -r: node-redis is not found, as on a machine without it.
const Module = require('module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'redis') {
    const e = new Error("Cannot find module 'redis'");
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  }
  return resolve.call(this, request, ...rest);
};
