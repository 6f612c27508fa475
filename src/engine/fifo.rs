//! A first-in first-out queue for the hot loop: a `Vec` read from a head
//! index, emptied whenever the last element is taken. Pushing and taking
//! are a store and a load with no wrap-around arithmetic and no
//! out-of-line call, unlike `VecDeque` (whose `push_back` the compiler
//! keeps out of line). Used for the event queue's lane and for a lock's
//! waiters.

/// Elements already taken from the front of a queue that never drains
/// before they are dropped (one move of what is left per this many takes).
const COMPACT: usize = 1024;

/// A FIFO of `Copy` elements (see the module documentation).
#[derive(Debug, Clone)]
pub struct Fifo<T> {
    v: Vec<T>,
    head: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo { v: Vec::new(), head: 0 }
    }
}

impl<T: Copy> Fifo<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of elements queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.v.len() - self.head
    }

    /// True when nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.v.len()
    }

    /// Adds `x` at the back.
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.head >= COMPACT {
            self.v.drain(..self.head);
            self.head = 0;
        }
        self.v.push(x);
    }

    /// Takes the front element, if any.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let x = *self.v.get(self.head)?;
        self.head += 1;
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        }
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Shadow model: a `VecDeque` gives the same elements in the same
        /// order, through enough pushes that the front is compacted.
        #[test]
        fn matches_vecdeque(ops in proptest::collection::vec(0u8..4, 1..4000)) {
            let mut f = Fifo::new();
            let mut d = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                if op == 0 {
                    prop_assert_eq!(f.pop_front(), d.pop_front());
                } else {
                    f.push_back(i);
                    d.push_back(i);
                }
                prop_assert_eq!(f.len(), d.len());
                prop_assert_eq!(f.is_empty(), d.is_empty());
            }
            while let Some(x) = d.pop_front() {
                prop_assert_eq!(f.pop_front(), Some(x));
            }
            prop_assert_eq!(f.pop_front(), None);
        }
    }
}
