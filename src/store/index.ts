export { createStore, type Store, type StoreOptions, type Op } from './store.js';
export { liveHolder, readLock, type LockInfo } from './lock.js';
