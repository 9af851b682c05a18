"""English key words for a Chinese slot phrase the vocabulary lacks, as data: "实验追踪" -> ``experiment_tracking``,
"GPU 集群" -> ``gpu_cluster``, "数据" -> ``data``. Keys are English snake_case whatever language the user wrote in, so
one project's facts keep one key when a later turn names the slot in the other language. A phrase with a Chinese
word the glossary lacks keeps the user's own words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import normalize_segment
from z0_memory.text import contains_cjk

# Chinese technical nouns and the English word a key uses for each; the longest match is taken first
_GLOSSARY = """
框架 framework|训练 training|推理 inference|模型 model|大模型 llm|语言模型 language_model|实验 experiment|追踪 tracking|
跟踪 tracking|缺陷 bug|管理 management|集群 cluster|数据 data|部署 deploy|队列 queue|消息 message|缓存 cache|
存储 storage|对象 object|日志 logging|监控 monitoring|告警 alerting|测试 testing|搜索 search|前端 frontend|后端 backend|
移动端 mobile|客户端 client|服务端 server|服务器 server|服务 service|接口 api|网关 gateway|支付 payments|推送 push|
通知 notifications|邮件 email|短信 sms|图片 image|图像 image|处理 processing|视频 video|音频 audio|文件 file|上传 upload|
认证 auth|鉴权 auth|登录 login|权限 permissions|配置 config|中心 center|注册 registry|发现 discovery|负载均衡 load_balancer|
数据库 database|连接池 connection_pool|连接 connection|池 pool|大小 size|分片 shards|副本 replicas|调度 scheduler|任务 job|
定时 scheduled|爬虫 crawler|抓取 scraping|向量 vector|检索 retrieval|嵌入 embedding|特征 feature|仓库 repository|
数据仓库 data_warehouse|代码 code|风格 style|格式 format|规范 convention|命名 naming|提交 commit|分支 branch|合并 merge|
发布 release|发版 release|版本 version|构建 build|打包 packaging|容器 container|编排 orchestration|镜像 image|网络 network|
安全 security|加密 encryption|密钥 secrets|国际化 i18n|翻译 translation|地图 maps|定位 location|埋点 event_tracking|统计 analytics|
分析 analytics|报表 reporting|可视化 visualization|图表 charts|状态 state|路由 routing|组件 component|组件库 component_library|
样式 styling|图标 icons|字体 fonts|主题 theme|写法 style|函数式 functional|异步 async|同步 sync|协同 collaboration|
编辑器 editor|文档 docs|运行时 runtime|进程 process|线程 thread|限流 rate_limiting|重试 retry|熔断 circuit_breaker|
快递 courier|物流 logistics|订单 order|用户 user|商品 product|库存 inventory|聚合 aggregation|第三方 third_party|
开发 development|环境 environment|生产 production|预发 staging|灰度 canary|回滚 rollback|备份 backup|迁移 migration|
脚本 scripts|工具 tool|平台 platform|语音 speech|识别 recognition|合成 synthesis|全文 full_text|风控 risk_control|
客服 customer_service|推荐 recommendation|排序 ranking|问答 qa|对话 dialogue|系统 system|引擎 engine|游戏 game|
物理 physics|渲染 rendering|动画 animation|音效 sound|存档 save|小程序 mini_program|云 cloud|函数 function|应用 app|
桌面 desktop|移动 mobile|安卓 android|包管理 package_manager|依赖 dependencies|类型 type|检查 check|格式化 formatter|
代码检查 linter|持续集成 ci|流水线 pipeline|工单 tickets|项目 project|看板 dashboard|主键 primary_key|时间戳 timestamps|
时区 timezone|缩进 indentation|引号 quotes|行宽 line_length|错误 error|异常 error|错误处理 error_handling|计费 billing|
设计 design|产品 product|运维 ops|安全 security|算法 algorithm|机器学习 ml|深度学习 deep_learning|后台 admin|管理后台 admin|
数据管道 data_pipeline|管道 pipeline|实时 realtime|流处理 stream_processing|批处理 batch_processing|网页 web|页面 page|
服务网格 service_mesh|注册中心 service_registry|配置中心 config_center|消息队列 message_queue|全链路 end_to_end|链路 trace|
性能 performance|压测 load_testing|单元 unit|集成 integration|端到端 e2e|覆盖率 coverage|富文本 rich_text|表单 forms|
校验 validation|验证 validation|序列化 serialization|模板 template|邮件模板 email_template|定价 pricing|订阅 subscription|
分布式 distributed|分库分表 sharding|库 library|插件 plugin|协议 protocol|直播 live_streaming|转码 transcoding|
机器人 bot|提醒 reminders|端 client|小程序端 mini_program|模型服务 model_serving|状态管理 state_management|
本地 local|云同步 cloud_sync|离线 offline|实时音视频 realtime_video|音视频 audio_video|短信 sms|
二维码 qr_code|验证码 captcha|富文本编辑器 rich_text_editor|表格 spreadsheet|导出 export|导入 import|
容器编排 container_orchestration|代码规范 code_style|注释 comments|接口文档 api_docs|沙箱 sandbox|求解器 solver|
图表层 charts|资源 assets|美术 art|业务逻辑 business_logic|时序 time_series|建模 modeling|运营 operations|市场 marketing|
模型 model|硬件 hardware|固件 firmware|标注 annotation|合规 compliance
"""
_WORDS: dict[str, str] = dict(
    entry.strip().split(" ", 1) for entry in _GLOSSARY.replace("\n", "").split("|") if entry.strip()
)
_LONGEST = max(len(k) for k in _WORDS)
_PARTICLES = frozenset("的之和与及")


@lru_cache(maxsize=1024)
def english_entity(phrase: str) -> str | None:
    """``phrase`` as an English snake_case key segment (Latin words kept, Chinese words from the glossary), or None
    when a Chinese word in it is not in the glossary."""
    words: list[str] = []
    for run in re.findall(r"[\u4e00-\u9fff]+|[A-Za-z0-9][\w.+#-]*", phrase):
        if not contains_cjk(run):
            words.append(run.lower())
            continue
        i = 0
        while i < len(run):
            for size in range(min(_LONGEST, len(run) - i), 0, -1):
                if run[i:i + size] in _WORDS:
                    words.append(_WORDS[run[i:i + size]])
                    i += size
                    break
            else:
                if run[i] not in _PARTICLES:
                    return None
                i += 1
    try:
        return normalize_segment(" ".join(dict.fromkeys(words))) if words else None
    except InvalidKeyError:
        return None


def key_entity(phrase: str) -> str | None:
    """The key segment for a slot phrase: English as written, Chinese through the glossary, else the user's own
    words (None when they make no valid segment)."""
    english = english_entity(phrase) if contains_cjk(phrase) else None
    try:
        return english or normalize_segment(phrase)
    except InvalidKeyError:
        return None
