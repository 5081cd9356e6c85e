//! Go's `sort.Slice` (pattern-defeating quicksort), step for step: the CPU assignment sorts
//! with comparators that are not strict weak orders, so which order comes out depends on the
//! algorithm, and the kubelet-style assignment Volcano computes must come out the same.

/// Sorts `v` as Go's `sort.Slice(v, less)` does.
pub fn sort_slice<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let n = v.len();
    let limit = usize::BITS - n.leading_zeros();
    let mut s = Sorter { v, less: &mut less };
    s.pdqsort(0, n, limit);
}

struct Sorter<'a, T, F> {
    v: &'a mut [T],
    less: &'a mut F,
}

#[derive(PartialEq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

impl<T, F: FnMut(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&mut self, i: usize, j: usize) -> bool {
        (self.less)(&self.v[i], &self.v[j])
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.v.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.v.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let hi = b - a;
        for i in (0..hi.div_ceil(2)).rev() {
            self.sift_down(i, hi, a);
        }
        for i in (0..hi).rev() {
            self.v.swap(a, a + i);
            self.sift_down(0, i, a);
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: u32) {
        const MAX_INSERTION: usize = 12;
        let (mut was_balanced, mut was_partitioned) = (true, true);
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.v[a..b].reverse();
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already) = self.partition(a, b, pivot);
            was_partitioned = already;
            let (left, right) = (mid - a, b - mid);
            let threshold = length / 8;
            if left < right {
                was_balanced = left >= threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    /// Partitions around `pivot`; `i` and `j` may cross below `a + 1`, so they are signed.
    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.v.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        while i <= j && self.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !self.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            self.v.swap(j as usize, a);
            return (j as usize, true);
        }
        self.v.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i as usize, a) {
                i += 1;
            }
            while i <= j && !self.less(j as usize, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.v.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        self.v.swap(j as usize, a);
        (j as usize, false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.v.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        loop {
            while i <= j && !self.less(a, i as usize) {
                i += 1;
            }
            while i <= j && self.less(a, j as usize) {
                j -= 1;
            }
            if i > j {
                return i as usize;
            }
            self.v.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.v.swap(i, i - 1);
            if i - a >= 2 {
                // Go walks down to index 1, not to `a`.
                let mut j = i - 1;
                while j >= 1 && self.less(j, j - 1) {
                    self.v.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b && self.less(j, j - 1) {
                    self.v.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length < 8 {
            return;
        }
        let mut random = length as u64;
        let modulus = 1usize << (usize::BITS - length.leading_zeros());
        let mid = a + (length / 4) * 2;
        for idx in mid - 1..=mid + 1 {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            let mut other = (random as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            self.v.swap(idx, a + other);
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0;
        let (mut i, mut j, mut k) = (a + l / 4, a + l / 4 * 2, a + l / 4 * 3);
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        let hint = match swaps {
            0 => Hint::Increasing,
            MAX_SWAPS => Hint::Decreasing,
            _ => Hint::Unknown,
        };
        (j, hint)
    }

    fn order2(&mut self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&mut self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, c) = self.order2(b, c, swaps);
        let _ = c;
        let (_, b) = self.order2(a, b, swaps);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Go 1.26's `sort.Slice` leaves under comparators that are not strict weak orders
    /// (recorded from Go): 40 values (the insertion sort of short runs, pivots, partitions) and
    /// 300 (the ninther pivots and pattern breaking as well).
    #[test]
    fn sorts_like_go_under_inconsistent_comparators() {
        let mut v: Vec<i32> = (0..40).map(|i| (i * 17) % 40).collect();
        sort_slice(&mut v, |l, r| l % 7 < r % 7 || l < r);
        assert_eq!(v, words(GO_ORDER_40));
        let mut w: Vec<i32> = (0..300).map(|i| (i * 7919) % 300).collect();
        sort_slice(&mut w, |l, r| l % 11 < r % 11 || l < r);
        assert_eq!(w, words(GO_ORDER_300));
    }

    fn words(text: &str) -> Vec<i32> {
        text.split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect()
    }

    #[test]
    fn sorts_a_consistent_order_fully() {
        let mut v: Vec<i32> = (0..300).map(|i| (i * 7919) % 300).collect();
        sort_slice(&mut v, |l, r| l < r);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    const GO_ORDER_40: &str = "0 7 14 21 28 35 1 8 2 3 4 5 6 9 15 22 29 16 23 36 30 37 10 11 12 13 17 24 31 38 18 25 32 39 19 20 26 27 33 34";
    const GO_ORDER_300: &str = "0 1 2 3 11 12 13 4 5 6 7 8 22 23 24 33 44 34 45 35 46 9 10 55 56 57 66 67 77 88 78 89 68 79 90 99 110 100 101 111 112 14 25 15 36 28 47 17 37 16 58 59 69 80 26 27 48 70 81 91 92 102 103 18 29 19 30 113 114 121 132 122 143 133 123 134 124 125 144 145 20 21 154 155 165 176 187 156 198 209 220 231 242 253 264 275 286 297 166 167 177 188 199 210 221 232 243 254 265 276 287 298 178 189 200 211 222 233 244 255 266 277 288 299 135 146 157 168 179 190 201 212 223 234 245 256 267 278 289 31 32 38 49 60 39 50 40 41 61 42 43 51 62 52 53 54 136 147 158 169 180 191 202 213 224 235 246 257 268 279 290 71 82 72 83 93 104 115 126 137 148 159 170 181 192 203 73 84 214 225 236 247 258 269 280 291 94 105 116 127 138 149 160 171 95 106 117 128 139 182 193 204 215 226 237 248 259 270 281 292 63 74 85 96 107 118 129 140 64 65 75 86 76 87 97 108 98 109 119 120 130 131 141 142 150 151 161 172 183 162 173 184 152 153 163 174 185 194 205 195 196 206 207 216 217 227 238 249 218 260 271 282 293 164 175 186 197 208 219 228 229 230 239 250 261 272 240 251 241 252 262 273 263 274 283 284 285 294 295 296";
}
