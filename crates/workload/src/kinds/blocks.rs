//! Blocks of files and devices: [`IoGen`] as a kind. The job's pacing
//! decides when each block goes out; a completion changes nothing.

use super::Generator;
use crate::rng::Rng;
use crate::{IoGen, NextIo};

impl Generator for IoGen {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        Iterator::next(self)
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        IoGen::rng(self)
    }

    #[inline]
    fn take_wrapped(&mut self) -> bool {
        IoGen::take_wrapped(self)
    }

    #[inline]
    fn count_read(&mut self, bytes: u64) {
        IoGen::count_read(self, bytes)
    }

    fn pass_ended(&self) -> bool {
        IoGen::pass_ended(self)
    }

    fn next_pass(&mut self) -> bool {
        IoGen::next_pass(self)
    }
}
