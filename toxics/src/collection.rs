//! The proxy collection: every proxy of one server, by unique name, in creation order.
//!
//! It owns the set's integrity (no two proxies with one name), creation, bulk populate (create
//! or replace), removal, and reset (every proxy enabled, every toxic removed). It also seeds
//! each new proxy's generator from the server seed, in creation order. It must not know about
//! HTTP or about what happens inside a proxy.

use std::sync::{Arc, Mutex, MutexGuard};

use indexmap::IndexMap;
use tokio::runtime::Handle;

use crate::error::ApiError;
use crate::proxy::{Applied, Proxy, ProxyConfig};
use crate::rng::Rng;

/// A populate that stopped part-way: the proxies handled before the failure, and why.
#[derive(Debug)]
pub struct PopulateError {
    /// Proxies created, replaced or kept before the failure.
    pub done: Vec<Arc<Proxy>>,
    /// What failed.
    pub error: ApiError,
}

/// Every proxy of one server.
pub struct ProxyCollection {
    /// By name, in creation order (the order `GET /proxies` lists them in).
    proxies: Mutex<IndexMap<String, Arc<Proxy>>>,
    /// The runtime proxies run their tasks on.
    rt: Handle,
    /// The seed this collection was made with, reported so a run can be replayed.
    seed: u64,
    /// Draws each new proxy's seed.
    seeds: Mutex<Rng>,
}

impl std::fmt::Debug for ProxyCollection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyCollection")
            .field("seed", &self.seed)
            .field("proxies", &self.lock().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ProxyCollection {
    /// An empty collection whose proxies run on `rt` and draw randomness from `seed`.
    pub fn new(rt: Handle, seed: u64) -> Self {
        Self {
            proxies: Mutex::new(IndexMap::new()),
            rt,
            seed,
            seeds: Mutex::new(Rng::new(seed)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, IndexMap<String, Arc<Proxy>>> {
        self.proxies.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The seed all randomness derives from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn new_proxy(&self, config: &ProxyConfig) -> Arc<Proxy> {
        let seed = self
            .seeds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_u64();
        Proxy::new(config, self.rt.clone(), seed)
    }

    /// Create a proxy (409 when the name is taken), listening now if `config.enabled`.
    pub fn create(&self, config: ProxyConfig) -> Result<Arc<Proxy>, ApiError> {
        config.validate()?;
        let mut proxies = self.lock();
        if proxies.contains_key(&config.name) {
            return Err(ApiError::proxy_already_exists());
        }
        let proxy = self.new_proxy(&config);
        if config.enabled {
            proxy.start()?;
        }
        proxies.insert(config.name.clone(), proxy.clone());
        Ok(proxy)
    }

    /// Create or replace proxies in bulk, as `POST /populate` does: all configs are checked
    /// first; a proxy that exists with the same listen and upstream is kept as it is (toxics
    /// and all), one that differs is replaced. On a failure, the proxies handled so far are
    /// returned with the error.
    pub fn populate(&self, configs: Vec<ProxyConfig>) -> Result<Vec<Arc<Proxy>>, PopulateError> {
        for (i, config) in configs.iter().enumerate() {
            if config.name.is_empty() {
                return Err(PopulateError {
                    done: Vec::new(),
                    error: ApiError::missing_field()
                        .with_detail(format!("name at proxy {}", i + 1)),
                });
            }
            if config.upstream.is_empty() {
                return Err(PopulateError {
                    done: Vec::new(),
                    error: ApiError::missing_field()
                        .with_detail(format!("upstream at proxy {}", i + 1)),
                });
            }
        }
        let mut done = Vec::with_capacity(configs.len());
        for config in configs {
            let mut proxies = self.lock();
            if let Some(existing) = proxies.get(&config.name).cloned() {
                match existing.differs_from(&config) {
                    Err(error) => return Err(PopulateError { done, error }),
                    Ok(false) => {
                        done.push(existing);
                        continue;
                    }
                    Ok(true) => existing.stop(),
                }
            }
            let proxy = self.new_proxy(&config);
            if config.enabled
                && let Err(error) = proxy.start()
            {
                return Err(PopulateError { done, error });
            }
            proxies.insert(config.name.clone(), proxy.clone());
            done.push(proxy);
        }
        Ok(done)
    }

    /// A proxy by name (404 when there is none).
    pub fn get(&self, name: &str) -> Result<Arc<Proxy>, ApiError> {
        self.lock()
            .get(name)
            .cloned()
            .ok_or_else(ApiError::proxy_not_found)
    }

    /// Stop and forget a proxy (404 when there is none).
    pub fn remove(&self, name: &str) -> Result<(), ApiError> {
        let proxy = self
            .lock()
            .shift_remove(name)
            .ok_or_else(ApiError::proxy_not_found)?;
        proxy.stop();
        Ok(())
    }

    /// Every proxy, in creation order.
    pub fn all(&self) -> Vec<Arc<Proxy>> {
        self.lock().values().cloned().collect()
    }

    /// Enable every proxy and remove every toxic, as `POST /reset` does.
    pub fn reset(&self) -> Result<Applied, ApiError> {
        let mut applied = Vec::new();
        for proxy in self.all() {
            proxy.start()?;
            applied.push(proxy.remove_all_toxics());
        }
        Ok(Applied::merge(applied))
    }

    /// Stop and forget every proxy.
    pub fn clear(&self) {
        let drained: Vec<_> = self.lock().drain(..).collect();
        for (_, proxy) in drained {
            proxy.stop();
        }
    }
}
