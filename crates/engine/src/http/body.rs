//! Request bodies: one piece (most requests), or several sent in order (the
//! aws-chunked encoding interleaves chunk headers with slices of the data).
//! Pieces are `Bytes`, so slices of a lent buffer slot go out without a copy.

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

pub struct Body {
    pieces: Pieces,
    left: u64,
}

enum Pieces {
    One(Option<Bytes>),
    Many(VecDeque<Bytes>),
}

impl Body {
    pub fn new(b: Bytes) -> Body {
        let left = b.len() as u64;
        Body { pieces: Pieces::One((!b.is_empty()).then_some(b)), left }
    }

    pub fn from_pieces(pieces: Vec<Bytes>) -> Body {
        let left = pieces.iter().map(|p| p.len() as u64).sum();
        Body { pieces: Pieces::Many(pieces.into_iter().filter(|p| !p.is_empty()).collect()), left }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = match &mut self.pieces {
            Pieces::One(b) => b.take(),
            Pieces::Many(q) => q.pop_front(),
        };
        if let Some(b) = &next {
            self.left -= b.len() as u64;
        }
        Poll::Ready(next.map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn pieces_come_out_in_order_and_the_size_is_exact() {
        let b = Body::from_pieces(vec![Bytes::from_static(b"ab"), Bytes::new(), Bytes::from_static(b"cde")]);
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(5));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(rt.block_on(b.collect()).unwrap().to_bytes(), Bytes::from_static(b"abcde"));
        let empty = Body::new(Bytes::new());
        assert!(http_body::Body::is_end_stream(&empty));
    }
}
