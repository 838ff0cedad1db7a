//! Name resolution for the HTTP client: the system's (getaddrinfo), or one
//! fixed address for every host name when `connect_to` is set, as curl's
//! --connect-to does. That reaches virtual-host buckets (bucket.s3.example)
//! without wildcard DNS, or one gateway behind a load-balanced name, while
//! the Host header, the signature and the TLS name stay the URL's.

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

#[derive(Clone)]
pub struct Resolver {
    fixed: Option<IpAddr>,
    system: GaiResolver,
}

impl Resolver {
    pub fn new(fixed: Option<IpAddr>) -> Resolver {
        Resolver { fixed, system: GaiResolver::new() }
    }
}

type Addrs = std::vec::IntoIter<SocketAddr>;

impl tower_service::Service<Name> for Resolver {
    type Response = Addrs;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, std::io::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
        self.system.poll_ready(cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        if let Some(ip) = self.fixed {
            // Port 0: the connector puts in the URL's port.
            return Box::pin(std::future::ready(Ok(vec![SocketAddr::new(ip, 0)].into_iter())));
        }
        let lookup = self.system.call(name);
        Box::pin(async move { Ok(lookup.await?.collect::<Vec<_>>().into_iter()) })
    }
}
