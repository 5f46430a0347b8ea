"""A kazoo peer for the interop tests: one KazooClient session, driven by line commands on stdin,
answering JSON lines on stdout (the protocol of CuratorPeer.java). Run with Debian's python3 and
python3-kazoo:  /usr/bin/python3 kazoo_peer.py <hosts>
Commands: "acquire <id> mutex <path>" (kazoo Lock, told our node names with
extra_lock_patterns), "release <id>", "quit"."""
import json
import sys
import threading

from kazoo.client import KazooClient

# Our (and Curator's) mutex nodes end in "-lock-<10 digits>": kazoo sees them as contenders only
# when told so.
OUR_PATTERNS = ["-lock-"]
say_lock = threading.Lock()


def say(**event):
    with say_lock:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def hold(client, ident, path, release):
    try:
        lock = client.Lock(path, extra_lock_patterns=OUR_PATTERNS)
        lock.acquire()
        say(event="acquired", id=ident)
        release.wait()
        lock.release()
        say(event="released", id=ident)
    except Exception as error:  # reported, not raised: the test decides
        say(event="error", id=ident, message=type(error).__name__)


def main():
    client = KazooClient(hosts=sys.argv[1], timeout=10.0)
    client.start()
    releases = {}
    say(event="ready")
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        ident = words[1]
        if words[0] == "acquire":
            releases[ident] = threading.Event()
            args = (client, ident, words[3], releases[ident])
            threading.Thread(target=hold, args=args, daemon=True).start()
        elif words[0] == "release":
            releases.pop(ident).set()
    client.stop()
    client.close()


main()
