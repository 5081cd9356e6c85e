//! Manifest files, plain or gzip-compressed (a name ending in `.gz`), opened as byte streams so a
//! cluster of hundreds of thousands of objects never needs its whole text in memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Opens `path` for reading, decompressing a `.gz` file.
pub fn open_reader(path: &Path) -> io::Result<Box<dyn BufRead>> {
    let file = File::open(path)?;
    Ok(if is_gzip(path) {
        Box::new(BufReader::new(MultiGzDecoder::new(BufReader::new(file))))
    } else {
        Box::new(BufReader::new(file))
    })
}

/// A file being written, compressed when its name ends in `.gz`; `finish` flushes it and
/// writes the gzip trailer, so a failure there is reported instead of lost in a drop.
pub struct ManifestWriter {
    inner: Inner,
}

enum Inner {
    Plain(BufWriter<File>),
    Gzip(BufWriter<GzEncoder<File>>),
}

impl ManifestWriter {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> io::Result<ManifestWriter> {
        let file = File::create(path)?;
        let inner = if is_gzip(path) {
            Inner::Gzip(BufWriter::new(GzEncoder::new(file, Compression::default())))
        } else {
            Inner::Plain(BufWriter::new(file))
        };
        Ok(ManifestWriter { inner })
    }

    /// Flushes everything and closes the file.
    pub fn finish(self) -> io::Result<()> {
        match self.inner {
            Inner::Plain(w) => w.into_inner().map_err(|e| e.into_error())?.sync_all(),
            Inner::Gzip(w) => w
                .into_inner()
                .map_err(|e| e.into_error())?
                .finish()?
                .sync_all(),
        }
    }
}

impl Write for ManifestWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Plain(w) => w.write(buf),
            Inner::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Plain(w) => w.flush(),
            Inner::Gzip(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;
    use std::io::Read;

    fn round_trip(name: &str) -> (String, Vec<u8>) {
        let dir = TestDir::new(&[]);
        let path = dir.join(name);
        let mut w = ManifestWriter::create(&path).unwrap();
        w.write_all(b"{\"kind\": \"Node\"}\n").unwrap();
        w.finish().unwrap();
        let mut text = String::new();
        open_reader(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        (text, std::fs::read(&path).unwrap())
    }

    #[test]
    fn gz_names_are_compressed_and_read_back() {
        let (text, bytes) = round_trip("c.json.gz");
        assert_eq!(text, "{\"kind\": \"Node\"}\n");
        assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    }

    #[test]
    fn other_names_are_plain() {
        let (text, bytes) = round_trip("c.json");
        assert_eq!(text.as_bytes(), bytes);
    }
}
