//! Ceph engines and what they share: the run-time-loaded librados/librbd API
//! and a cluster connection built from the engines' own options.

pub mod conn;
pub mod cxx;
pub mod ffi;
pub mod rados;
pub mod rbd;
pub mod watch;
