# Adds to the real aw-server two more devices overlapping the desktop's 26 Nov (UTC+9):
# work-laptop (window + AFK, 14:00-16:30 local) and phone (the Android app's bucket, no AFK, 12:00-13:40 local).
import json, urllib.request, datetime as dt
U = "http://127.0.0.1:5644/api/0"
tz = dt.timezone(dt.timedelta(hours=9))
def post(path, body):
    req = urllib.request.Request(U + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(req).read()
def bucket(bid, typ, host, client):
    post(f"/buckets/{bid}", {"client": client, "type": typ, "hostname": host})
def at(h, m=0, s=0):
    return dt.datetime(2026, 11, 26, h, m, s, tzinfo=tz)
bucket("aw-watcher-window_work-laptop", "currentwindow", "work-laptop", "aw-watcher-window")
bucket("aw-watcher-afk_work-laptop", "afkstatus", "work-laptop", "aw-watcher-afk")
bucket("aw-watcher-android-test", "currentwindow", "phone", "aw-android-test")
post("/buckets/aw-watcher-afk_work-laptop/events", [
    {"timestamp": at(14).isoformat(), "duration": 9000.0, "data": {"status": "not-afk"}},
    {"timestamp": at(16, 30).isoformat(), "duration": 1800.0, "data": {"status": "afk"}}])
ev, t, i = [], at(14), 0
while t < at(16, 30):
    d = [("Slack", "general - Slack"), ("zoom", "Zoom Meeting"), ("Slack", "billing-api - Slack")][i % 3]
    ev.append({"timestamp": t.isoformat(), "duration": 290.0, "data": {"app": d[0], "title": d[1]}})
    t += dt.timedelta(seconds=300); i += 1
post("/buckets/aw-watcher-window_work-laptop/events", ev)
ev, t, i = [], at(12), 0
while t < at(13, 40):
    d = [("WhatsApp", "WhatsApp"), ("YouTube", "YouTube"), ("Chrome", "Chrome")][i % 3]
    ev.append({"timestamp": t.isoformat(), "duration": 238.0, "data": {"app": d[0], "title": d[1], "classname": d[0]}})
    t += dt.timedelta(seconds=240); i += 1
post("/buckets/aw-watcher-android-test/events", ev)
print("ok")
