//! A directory entry name as the directory model keeps it: names of up to
//! [`INLINE_NAME_LEN`] bytes are stored in place, longer ones (up to the
//! 255 bytes of `BTRFS_NAME_LEN`) on the heap. Ordered, compared and hashed
//! as the bytes they hold, so a map keyed by `DirName` looks up with a
//! `&[u8]` and iterates in the same order as one keyed by `Vec<u8>`.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// Longest name stored without a heap allocation, bytes.
pub const INLINE_NAME_LEN: usize = 22;

/// One name: 24 bytes, no allocation for short names (a `Vec<u8>` costs 24
/// bytes plus a heap block of at least 32).
#[derive(Clone)]
pub enum DirName {
    /// A short name: its length and bytes.
    Inline(u8, [u8; INLINE_NAME_LEN]),
    /// A longer name.
    Heap(Box<[u8]>),
}

impl DirName {
    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            DirName::Inline(len, bytes) => &bytes[..usize::from(*len)],
            DirName::Heap(b) => b,
        }
    }
}

impl From<&[u8]> for DirName {
    fn from(name: &[u8]) -> Self {
        if name.len() <= INLINE_NAME_LEN {
            let mut bytes = [0u8; INLINE_NAME_LEN];
            bytes[..name.len()].copy_from_slice(name);
            DirName::Inline(name.len() as u8, bytes)
        } else {
            DirName::Heap(name.into())
        }
    }
}

impl Borrow<[u8]> for DirName {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for DirName {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for DirName {}

impl PartialOrd for DirName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DirName {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for DirName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl std::fmt::Debug for DirName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names_order_as_bytes() {
        let names: [&[u8]; 5] = [b"", b"file_1", b"file_10", &[b'a'; 22], &[b'a'; 23]];
        for a in names {
            assert_eq!(DirName::from(a).as_bytes(), a);
            for b in names {
                assert_eq!(DirName::from(a).cmp(&DirName::from(b)), a.cmp(b));
            }
        }
        assert!(matches!(DirName::from(&[b'a'; 22][..]), DirName::Inline(..)));
        assert!(matches!(DirName::from(&[b'a'; 23][..]), DirName::Heap(_)));
        assert_eq!(std::mem::size_of::<DirName>(), 24);
    }
}
